"""Hand-written demo content for the seed's feeds, named from YAML by ``meta.floe.demo``.

Each attribute named there (``customers.master``, ``streams.ventilator`` ...) gives a
feed kind the *content* of its demo files; the kind (floe.feeds.kinds) owns the layout
(folders, file names, framing). A feed without ``demo`` gets schema-driven content
(floe.generator.synth).
"""
