"""Executes plans through the ports: observe the platform, apply actions, keep the state file and the lock."""
