"""measures package."""
