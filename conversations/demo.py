from conversations.knowledge.demo import seed  # noqa: F401
