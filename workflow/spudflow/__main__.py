from spudflow.cli import main

raise SystemExit(main())
