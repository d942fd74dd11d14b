from stax.cli import main

raise SystemExit(main())
