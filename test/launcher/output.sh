#!/bin/sh
# Output forwarding: whole lines only, even when 4 PEs print 2000 long lines
# at once; --tag-output prefixes; partial last lines; stdin to PE 0 only.
. "$(dirname "$0")/common.sh"

LINES=2000
LEN=300
# Every line is "<rank>:<i>:<LEN letters>:end"; the letter depends on rank
# and i, so any line cut or mixed with another fails the check.
check_lines() { # $1 = file, $2 = tagged (0/1), $3 = expected lines per PE
    awk -v tagged="$2" -v len="$LEN" -v want="$3" -v n=4 '
    {
        line = $0
        if (tagged) {
            if (!match(line, /^\[[0-9]+\] /)) { print "untagged: " substr(line, 1, 80); bad = 1; next }
            tag = substr(line, 2, RLENGTH - 3); line = substr(line, RLENGTH + 1)
        }
        k = split(line, f, ":")
        if (k != 4 || f[4] != "end" || length(f[3]) != len) { print "broken: " substr($0, 1, 80); bad = 1; next }
        if (tagged && tag != f[1]) { print "wrong tag: " substr($0, 1, 80); bad = 1; next }
        c = substr("abcdefghijklmnopqrstuvwxyz", (f[1] + f[2]) % 26 + 1, 1)
        s = f[3]; gsub(c, "", s)
        if (s != "") { print "mixed: " substr($0, 1, 80); bad = 1; next }
        count[f[1]]++
    }
    END {
        for (r = 0; r < n; r++) if (count[r] != want) { print "PE " r ": " count[r] + 0 " lines, expected " want; bad = 1 }
        exit bad
    }' "$1"
}

out_lines=$(( LINES - LINES / 10 ))
err_lines=$(( LINES / 10 ))
for tag in 0 1; do
    opt=
    [ $tag = 1 ] && opt=--tag-output
    "$LAUNCHER" -n 4 $opt "$BOOT_CLIENT" "$MARK" spam $LINES $LEN \
        >"$TEST_TMP/spam.out" 2>"$TEST_TMP/spam.err" || fail "spam (tag $tag) failed"
    check_lines "$TEST_TMP/spam.out" $tag $out_lines || fail "stdout lines (tag $tag)"
    check_lines "$TEST_TMP/spam.err" $tag $err_lines || fail "stderr lines (tag $tag)"
done

run "$LAUNCHER" -n 3 --tag-output "$BOOT_CLIENT" "$MARK" partial
expect_rc 0 "partial line"
for r in 0 1 2; do
    printf '%s\n' "$OUT" | grep -qx "\[$r\] rank $r says no newline" ||
        fail "partial line of PE $r lost: $OUT"
done

printf 'hello from stdin\n' | "$LAUNCHER" -n 3 "$BOOT_CLIENT" "$MARK" stdin >"$TEST_TMP/out" 2>&1 ||
    fail "stdin job failed"
grep -qx 'rank 0 read: hello from stdin' "$TEST_TMP/out" || fail "PE 0 did not get stdin"
grep -qx 'rank 1 stdin eof' "$TEST_TMP/out" || fail "PE 1 got stdin"
grep -qx 'rank 2 stdin eof' "$TEST_TMP/out" || fail "PE 2 got stdin"
expect_clean "output"
exit 0
