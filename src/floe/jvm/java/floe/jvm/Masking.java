package floe.jvm;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.Base64;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.apache.spark.sql.api.java.UDF1;

/**
 * {@code floe_hash} and {@code floe_encrypt} in the JVM (docs/decisions/0059).
 *
 * <p>The same values as floe.privacy.masking's hash_value (HMAC-SHA256, hex) and
 * encrypt_value (AES-SIV, RFC 5297, no associated data, URL-safe base64 without padding),
 * computed where the rows are instead of in a Python worker. The secrets live in the
 * function objects only; {@link #toString} never shows them.
 */
public final class Masking {
  private Masking() {}

  /** floe_hash: HMAC-SHA256 of the UTF-8 text keyed by the salt, lower-case hex. */
  public static UDF1<String, String> hash(byte[] salt) {
    return new Hash(salt.clone());
  }

  /** floe_encrypt: deterministic AES-SIV of the UTF-8 text, URL-safe base64, unpadded. */
  public static UDF1<String, String> encrypt(byte[] key) {
    if (key.length != 32 && key.length != 48 && key.length != 64) {
      throw new IllegalArgumentException("an AES-SIV key is 32, 48 or 64 bytes");
    }
    return new Encrypt(key.clone());
  }

  static final char[] HEX = "0123456789abcdef".toCharArray();

  static final class Hash implements UDF1<String, String> {
    private final byte[] salt;
    private transient Mac mac;

    Hash(byte[] salt) {
      this.salt = salt;
    }

    @Override
    public String call(String text) throws GeneralSecurityException {
      if (text == null) {
        return null;
      }
      if (mac == null) {
        mac = Mac.getInstance("HmacSHA256");
        // An empty salt is refused by SecretKeySpec; HMAC with an empty key is a
        // key of zeros (RFC 2104 pads it), which is what Python computes.
        mac.init(new SecretKeySpec(salt.length == 0 ? new byte[64] : salt, "HmacSHA256"));
      }
      byte[] digest = mac.doFinal(text.getBytes(StandardCharsets.UTF_8));
      char[] out = new char[digest.length * 2];
      for (int i = 0; i < digest.length; i++) {
        out[2 * i] = HEX[(digest[i] >> 4) & 0xF];
        out[2 * i + 1] = HEX[digest[i] & 0xF];
      }
      return new String(out);
    }

    @Override
    public String toString() {
      return "floe_hash";
    }
  }

  static final class Encrypt implements UDF1<String, String> {
    private final byte[] key;
    private transient Cipher ecb; // K1: CMAC's block cipher
    private transient Cipher ctr; // K2: the keystream
    private transient SecretKeySpec ctrKey;
    private transient byte[] k1;
    private transient byte[] k2;

    Encrypt(byte[] key) {
      this.key = key;
    }

    private void init() throws GeneralSecurityException {
      int half = key.length / 2;
      ecb = Cipher.getInstance("AES/ECB/NoPadding");
      ecb.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(Arrays.copyOfRange(key, 0, half), "AES"));
      ctrKey = new SecretKeySpec(Arrays.copyOfRange(key, half, key.length), "AES");
      ctr = Cipher.getInstance("AES/CTR/NoPadding");
      byte[] l = ecb.doFinal(new byte[16]);
      k1 = dbl(l);
      k2 = dbl(k1);
    }

    @Override
    public String call(String text) throws GeneralSecurityException {
      if (text == null) {
        return null;
      }
      if (ecb == null) {
        init();
      }
      byte[] plain = text.getBytes(StandardCharsets.UTF_8);
      // S2V with the plaintext as its only string (RFC 5297 2.4, n = 1).
      byte[] d = cmac(new byte[16]);
      byte[] t;
      if (plain.length >= 16) {
        t = plain.clone();
        int off = t.length - 16;
        for (int i = 0; i < 16; i++) {
          t[off + i] ^= d[i];
        }
      } else {
        t = dbl(d);
        for (int i = 0; i < plain.length; i++) {
          t[i] ^= plain[i];
        }
        t[plain.length] ^= (byte) 0x80;
      }
      byte[] v = cmac(t);
      byte[] q = v.clone();
      q[8] &= 0x7F;
      q[12] &= 0x7F;
      ctr.init(Cipher.ENCRYPT_MODE, ctrKey, new IvParameterSpec(q));
      byte[] c = ctr.doFinal(plain);
      byte[] token = new byte[16 + c.length];
      System.arraycopy(v, 0, token, 0, 16);
      System.arraycopy(c, 0, token, 16, c.length);
      return Base64.getUrlEncoder().withoutPadding().encodeToString(token);
    }

    /** AES-CMAC (RFC 4493) with K1. */
    private byte[] cmac(byte[] m) throws GeneralSecurityException {
      int blocks = Math.max(1, (m.length + 15) / 16);
      boolean complete = m.length > 0 && m.length % 16 == 0;
      byte[] x = new byte[16];
      byte[] y = new byte[16];
      for (int b = 0; b < blocks - 1; b++) {
        for (int i = 0; i < 16; i++) {
          y[i] = (byte) (x[i] ^ m[b * 16 + i]);
        }
        x = ecb.doFinal(y);
      }
      byte[] last = new byte[16];
      int start = (blocks - 1) * 16;
      int rest = m.length - start;
      if (complete) {
        for (int i = 0; i < 16; i++) {
          last[i] = (byte) (m[start + i] ^ k1[i]);
        }
      } else {
        for (int i = 0; i < rest; i++) {
          last[i] = m[start + i];
        }
        last[rest] = (byte) 0x80;
        for (int i = 0; i < 16; i++) {
          last[i] ^= k2[i];
        }
      }
      for (int i = 0; i < 16; i++) {
        y[i] = (byte) (x[i] ^ last[i]);
      }
      return ecb.doFinal(y);
    }

    @Override
    public String toString() {
      return "floe_encrypt";
    }
  }

  /** Doubling in GF(2^128) (RFC 5297 2.3). */
  static byte[] dbl(byte[] s) {
    byte[] out = new byte[16];
    int carry = 0;
    for (int i = 15; i >= 0; i--) {
      int b = s[i] & 0xFF;
      out[i] = (byte) ((b << 1) | carry);
      carry = b >>> 7;
    }
    if ((s[0] & 0x80) != 0) {
      out[15] ^= (byte) 0x87;
    }
    return out;
  }
}
