"""Helpers below every layer that are not about derivatives: thread pools and the
allocator tuning they rely on. Nothing here imports from the rest of gradcli."""
