# Every registry target with what this host can do for it.
"$PREWARM" targets
