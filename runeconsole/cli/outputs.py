def register(subparsers, common):
    pass
