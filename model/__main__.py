from attention_lens.model.cli import main

raise SystemExit(main())
