"$PREWARM" plan --shard 5/4
