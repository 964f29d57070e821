"""ConfigStore stand-in: fairseq.dataclass.initialize.hydra_init stores its dataclasses here."""


class ConfigStore:
    _instance = None

    def __init__(self):
        self.entries = {}

    @classmethod
    def instance(cls):
        if cls._instance is None:
            cls._instance = ConfigStore()
        return cls._instance

    def store(self, name, node, group=None, package=None, provider=None):
        self.entries[(group, name)] = node
