package floe.jvm;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;
import javax.crypto.Cipher;
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
    /** SHA-256 after the key xor ipad, and after the key xor opad (RFC 2104). */
    private transient MessageDigest inner;
    private transient MessageDigest outer;

    Hash(byte[] salt) {
      this.salt = salt;
    }

    // HMAC-SHA256 = H((K ^ opad) || H((K ^ ipad) || m)). The two padded keys are one
    // block each and the same for every value: they are absorbed once, and each value
    // starts from a copy of those two states, so it costs the compressions of its own
    // blocks and the outer hash's last block, not the two key blocks again.
    private void init() throws GeneralSecurityException {
      byte[] k = new byte[64];
      byte[] material = salt.length > 64 ? MessageDigest.getInstance("SHA-256").digest(salt) : salt;
      System.arraycopy(material, 0, k, 0, material.length);
      byte[] ipad = new byte[64];
      byte[] opad = new byte[64];
      for (int i = 0; i < 64; i++) {
        ipad[i] = (byte) (k[i] ^ 0x36);
        opad[i] = (byte) (k[i] ^ 0x5c);
      }
      inner = MessageDigest.getInstance("SHA-256");
      inner.update(ipad);
      outer = MessageDigest.getInstance("SHA-256");
      outer.update(opad);
    }

    @Override
    public String call(String text) throws GeneralSecurityException {
      if (text == null) {
        return null;
      }
      if (inner == null) {
        init();
      }
      MessageDigest in;
      MessageDigest out;
      try {
        in = (MessageDigest) inner.clone();
        out = (MessageDigest) outer.clone();
      } catch (CloneNotSupportedException e) {
        throw new GeneralSecurityException("SHA-256 digest cannot be copied", e);
      }
      in.update(text.getBytes(StandardCharsets.UTF_8));
      out.update(in.digest());
      byte[] digest = out.digest();
      char[] hex = new char[digest.length * 2];
      for (int i = 0; i < digest.length; i++) {
        hex[2 * i] = HEX[(digest[i] >> 4) & 0xF];
        hex[2 * i + 1] = HEX[digest[i] & 0xF];
      }
      return new String(hex);
    }

    @Override
    public String toString() {
      return "floe_hash";
    }
  }

  static final class Encrypt implements UDF1<String, String> {
    private final byte[] key;
    private transient Cipher ecb; // K1: CMAC's block cipher
    private transient Cipher stream; // K2 in ECB: the CTR keystream, counters enciphered
    private transient byte[] k1;
    private transient byte[] k2;
    /** dbl(CMAC(zero block)): S2V's start for a plaintext shorter than a block. */
    private transient byte[] shortStart;
    /** CMAC(zero block): S2V's start, xored into the end of a longer plaintext. */
    private transient byte[] longStart;

    Encrypt(byte[] key) {
      this.key = key;
    }

    // Everything that depends on the key alone is computed once per function object:
    // the two ciphers' key schedules, CMAC's subkeys and S2V's constant first block
    // (CMAC of the zero block; RFC 5297 2.4). Per value only the value's own blocks are
    // enciphered: its CMAC and its keystream (CTR is the counters enciphered in ECB, so
    // no cipher is re-keyed per value).
    private void init() throws GeneralSecurityException {
      int half = key.length / 2;
      ecb = Cipher.getInstance("AES/ECB/NoPadding");
      ecb.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(Arrays.copyOfRange(key, 0, half), "AES"));
      stream = Cipher.getInstance("AES/ECB/NoPadding");
      stream.init(
          Cipher.ENCRYPT_MODE,
          new SecretKeySpec(Arrays.copyOfRange(key, half, key.length), "AES"));
      byte[] l = ecb.doFinal(new byte[16]);
      k1 = dbl(l);
      k2 = dbl(k1);
      longStart = cmac(new byte[16]);
      shortStart = dbl(longStart);
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
      byte[] t;
      if (plain.length >= 16) {
        t = plain.clone();
        int off = t.length - 16;
        for (int i = 0; i < 16; i++) {
          t[off + i] ^= longStart[i];
        }
      } else {
        t = shortStart.clone();
        for (int i = 0; i < plain.length; i++) {
          t[i] ^= plain[i];
        }
        t[plain.length] ^= (byte) 0x80;
      }
      byte[] v = cmac(t);
      byte[] token = new byte[16 + plain.length];
      System.arraycopy(v, 0, token, 0, 16);
      if (plain.length > 0) {
        // CTR from Q = V with bits 63 and 31 cleared; the counter is the whole
        // 128-bit block, big-endian, as AES/CTR and `cryptography` increment it.
        int blocks = (plain.length + 15) / 16;
        byte[] counters = new byte[blocks * 16];
        byte[] q = v.clone();
        q[8] &= 0x7F;
        q[12] &= 0x7F;
        for (int b = 0; b < blocks; b++) {
          System.arraycopy(q, 0, counters, b * 16, 16);
          increment(q);
        }
        byte[] keystream = stream.doFinal(counters);
        for (int i = 0; i < plain.length; i++) {
          token[16 + i] = (byte) (plain[i] ^ keystream[i]);
        }
      }
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
        ecb.doFinal(y, 0, 16, x, 0);
      }
      int start = (blocks - 1) * 16;
      int rest = m.length - start;
      if (complete) {
        for (int i = 0; i < 16; i++) {
          y[i] = (byte) (x[i] ^ m[start + i] ^ k1[i]);
        }
      } else {
        for (int i = 0; i < 16; i++) {
          byte last = i < rest ? m[start + i] : (i == rest ? (byte) 0x80 : 0);
          y[i] = (byte) (x[i] ^ last ^ k2[i]);
        }
      }
      byte[] out = new byte[16];
      ecb.doFinal(y, 0, 16, out, 0);
      return out;
    }

    @Override
    public String toString() {
      return "floe_encrypt";
    }
  }

  /** The 128-bit big-endian counter block plus one (wrapping), in place. */
  static void increment(byte[] counter) {
    for (int i = counter.length - 1; i >= 0; i--) {
      if (++counter[i] != 0) {
        return;
      }
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
