"""Stand-in for Hydra (not packaged by Debian): fairseq imports it at start-up to register its
config dataclasses and to compose configs from the command line. The interop scripts build
fairseq's configs directly (OmegaConf), so registration is a no-op and composing is refused."""
