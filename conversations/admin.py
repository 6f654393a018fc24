"""Admin for conversations and knowledge."""
