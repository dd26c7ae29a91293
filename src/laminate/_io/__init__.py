"""The async and sync shells around the sans-IO core: responses, iterables, SDK objects,
and complete bodies."""
