#!/bin/sh
# Fake extractor that answers too late: sleeps 3 s, then prints a valid fact.
# Run with `--timeout 1`: if the timeout were not enforced, a record would
# appear, and so would the file $SLOW_EXTRACTOR_DONE names (if set): a test
# that finds it knows the run waited for the command instead of killing it.
cat >/dev/null
sleep 3
if [ -n "${SLOW_EXTRACTOR_DONE:-}" ]; then : >"$SLOW_EXTRACTOR_DONE"; fi
printf '%s\n' '{"facts": [{"category": "decisions", "key": "too late", "text": "This fact arrived after the timeout and must not be stored.", "confidence": 0.9}]}'
