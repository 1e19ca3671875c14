"""Command groups of the goldenkit CLI; each module exposes register(subparsers)."""
