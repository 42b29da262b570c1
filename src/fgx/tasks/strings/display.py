"""The 25 atomic functions as the Stage-1 prompt shows them (``func_N`` names).

These definitions are what a model reads in a Stage-1 prompt: plain, literal Python whose
behaviour is the task's specification (upstream PRIME-RL/RL-Compositionality's 25 functions).
Their text is taken with ``inspect.getsource``, so keep every function self-contained and
written in the style its upstream name suggests (loops, recursion, back-chaining search).
fgx never runs these to compute answers: ``functions.py`` holds equivalent fast versions and
``tests/test_string_functions.py`` checks the two agree.
"""


def func_0(s):
    """Permute the characters with a fixed stride that is coprime with the length."""
    from math import gcd
    n = len(s)
    if n == 0:
        return s
    step = 3
    while gcd(step, n) != 1:
        step += 2
    return ''.join(s[(i * step) % n] for i in range(n))


def func_1(s, n):
    """Return s repeated n times."""
    return s * n


def func_2(s):
    """Drop every vowel, lower or upper case."""
    return ''.join(c for c in s if c not in 'aeiouAEIOU')


def func_3(s):
    """Sort the characters by code point."""
    return ''.join(sorted(s))


def func_4(s):
    """Reverse the order of the whitespace-separated words."""
    return ' '.join(s.split()[::-1])


def func_5(s, pre):
    """Put a prefix in front of s."""
    return pre + s


def func_6(s, suf):
    """Put a suffix after s."""
    return s + suf


def func_7(s1, s2):
    """Alternate the characters of s1 and s2 (iteratively); leftovers of the longer go last."""
    out = []
    for i in range(max(len(s1), len(s2))):
        if i < len(s1):
            out.append(s1[i])
        if i < len(s2):
            out.append(s2[i])
    return ''.join(out)


def func_8(s, n):
    """Rotate s left by n places, n taken modulo the length."""
    if not s:
        return s
    n = n % len(s)
    return s[n:] + s[:n]


def func_9(s):
    """Follow s by its reverse."""
    return s + s[::-1]


def func_10(s):
    """Lower-case the characters at even positions and upper-case those at odd positions."""
    return ''.join(c.upper() if i % 2 else c.lower() for i, c in enumerate(s))


def func_11(s, k):
    """Shift each ASCII letter k places through the alphabet, keeping its case; others stay."""
    def shift(c):
        if 'a' <= c <= 'z':
            return chr(ord('a') + (ord(c) - ord('a') + k) % 26)
        if 'A' <= c <= 'Z':
            return chr(ord('A') + (ord(c) - ord('A') + k) % 26)
        return c
    return ''.join(shift(c) for c in s)


def func_12(s):
    """Write vowels as digits: a->1, e->2, i->3, o->4, u->5 (either case)."""
    digits = {'a': '1', 'e': '2', 'i': '3', 'o': '4', 'u': '5'}
    return ''.join(digits[c.lower()] if c in 'aeiouAEIOU' else c for c in s)


def func_13(s, sep):
    """Insert sep between every two neighbouring characters."""
    return sep.join(s)


def func_14(s):
    """Write every character twice."""
    return ''.join(c + c for c in s)


def func_15(s):
    """Wrap every character in « and »."""
    return ''.join('«' + c + '»' for c in s)


def func_16(s):
    """Collapse every run of equal neighbouring characters to one character."""
    out = []
    for c in s:
        if not out or out[-1] != c:
            out.append(c)
    return ''.join(out)


def func_17(s):
    """Reverse s recursively."""
    if s == '':
        return s
    return func_17(s[1:]) + s[0]


def func_18(s, n):
    """Concatenate n copies of s, one per loop iteration."""
    out = ''
    for _ in range(n):
        out += s
    return out


def func_19(s, n):
    """Move the first character to the end, n times (stopping if s is empty)."""
    steps = 0
    while steps < n and s:
        s = s[1:] + s[0]
        steps += 1
    return s


def func_20(s1, s2):
    """Interlace s1 and s2 recursively; once one runs out, the rest of the other follows."""
    if s1 == '' or s2 == '':
        return s1 + s2
    return s1[0] + s2[0] + func_20(s1[1:], s2[1:])


def func_21(s):
    """Keep only the alphabetic characters, checking them one by one."""
    kept = ''
    for c in s:
        if c.isalpha():
            kept += c
    return kept


def func_22(s):
    """Keep s if its length is even, otherwise drop its last character."""
    if len(s) % 2 == 0:
        return s
    return s[:-1]


def func_23(s, depth):
    """Depth-first search, at most depth moves deep, for a variant of s that holds a digit."""
    moves = [
        lambda t: t + '1',
        lambda t: '2' + t,
        lambda t: t.replace('a', '3'),
        lambda t: t[::-1],
    ]

    def search(t, d):
        if any(c.isdigit() for c in t):
            return t
        if d == 0:
            return None
        for move in moves:
            found = search(move(t), d - 1)
            if found is not None:
                return found
        return None

    found = search(s, depth)
    return s if found is None else found


def func_24(s, depth):
    """Back-chain towards a palindrome: append the reverse, at most depth times."""
    if s == s[::-1] or depth <= 0:
        return s
    return func_24(s + s[::-1], depth - 1)
