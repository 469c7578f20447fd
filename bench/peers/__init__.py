"""The peers `bench/compare.py` measures cronledger against, each run as its own process."""
