"""%time, %timeit and %prun (and their %% cell forms), as IPython's
execution magics run and print them: a mixin of magics.Shell, which gives
it the cell's globals (glb) and how a cell's source is read (_source,
_name, _split_last)."""
import os
import sys

from .magic_args import UsageError, parse_options


def format_time(t, precision=3):
    """IPython's _format_time: 1.23 ms, 4.5 s, 1min 3s."""
    import math
    if t >= 60.0:
        parts, left = [], t
        for suffix, length in (("d", 86400), ("h", 3600), ("min", 60), ("s", 1)):
            value = int(left / length)
            if value > 0:
                left = left % length
                parts.append("%d%s" % (value, suffix))
            if left < 1:
                break
        return " ".join(parts)
    units = ["s", "ms", "\xb5s", "ns"]
    order = min(-int(math.floor(math.log10(t)) // 3), 3) if t > 0.0 else 3
    return "%.*g %s" % (precision, t * (1, 1e3, 1e6, 1e9)[order], units[order])


class TimingMagics:
    """The timing magics of magics.Shell."""

    def _time(self, code):
        import time
        t0 = time.perf_counter()
        src = self._source(code)
        name = self._name(src)
        tree, expr = self._split_last(src, name)
        body = compile(tree, name, "exec") if tree.body else None
        expr = compile(expr, name, "eval") if expr is not None else None
        tc = time.perf_counter() - t0
        value = None
        c0, w0 = os.times(), time.perf_counter()
        if body is not None:
            exec(body, self.glb)
        if expr is not None:
            value = eval(expr, self.glb)
        w1, c1 = time.perf_counter(), os.times()
        user, system = c1.user - c0.user, c1.system - c0.system
        print("CPU times: user %s, sys: %s, total: %s"
              % (format_time(user), format_time(system), format_time(user + system)))
        print("Wall time: %s" % format_time(w1 - w0))
        if tc > 0.1:
            print("Compiler : %s" % format_time(tc))
        return value

    def line_time(self, line):
        """Time one statement or expression (its value is the cell's)."""
        return self._time(line)

    def cell_time(self, line, cell):
        """Time the cell; a last expression is its value, as in IPython."""
        return self._time(cell)

    def _timeit(self, line, cell=None):
        import math
        import time
        import timeit
        opts, stmt = parse_options(line, "n:r:qop:")
        setup = "pass"
        if cell is not None:
            setup, stmt = (stmt or "pass"), cell
        if not stmt.strip():
            raise UsageError("%timeit needs a statement to time")
        try:
            number = int(opts.get("n", 0))
            repeat = int(opts.get("r", 7))
            precision = int(opts.get("p", 3))
        except ValueError as e:
            raise UsageError(str(e))
        t0 = time.perf_counter()
        timer = timeit.Timer(self._source(stmt), self._source(setup), time.perf_counter,
                             globals=self.glb)
        tc = time.perf_counter() - t0
        if number <= 0:
            # as IPython: the first power of 10 that takes at least 0.2 s
            for i in range(10):
                number = 10 ** i
                if timer.timeit(number) >= 0.2:
                    break
        runs = [t / number for t in timer.repeat(max(repeat, 1), number)]
        mean = sum(runs) / len(runs)
        std = math.sqrt(sum((t - mean) ** 2 for t in runs) / len(runs))
        if "q" not in opts:
            best, worst = min(runs), max(runs)
            if worst > 4 * best and best > 0 and worst > 1e-6:
                print("The slowest run took %0.2f times longer than the fastest. This could mean "
                      "that an intermediate result is being cached." % (worst / best))
            print("%s \xb1 %s per loop (mean \xb1 std. dev. of %d run%s, %s loop%s each)"
                  % (format_time(mean, precision), format_time(std, precision), len(runs),
                     "" if len(runs) == 1 else "s", "{:,}".format(number), "" if number == 1 else "s"))
            if tc > 0.1:
                print("Compiler time: %.2f s" % tc)
        return runs if "o" in opts else None

    def line_timeit(self, line):
        """%timeit [-n N -r R -q -o -p P] statement: IPython's timings."""
        return self._timeit(line)

    def cell_timeit(self, line, cell):
        """%%timeit [options] [setup]: time the cell's body."""
        return self._timeit(line, cell)

    def _prun(self, line, cell=None):
        import cProfile
        import pstats
        opts, stmt = parse_options(line, "s:l:q")
        if cell is not None:
            stmt = cell
        prof = cProfile.Profile()
        try:
            src = self._source(stmt)
            prof.runctx(compile(src, self._name(src), "exec"), self.glb, self.glb)
        finally:
            if "q" not in opts:
                stats = pstats.Stats(prof, stream=sys.stdout)
                stats.sort_stats(opts.get("s", "time"))
                limit = opts.get("l")
                try:
                    stats.print_stats(*([int(limit)] if limit else []))
                except ValueError:
                    stats.print_stats(limit)

    def line_prun(self, line):
        """Profile a statement (cProfile), sorted by internal time."""
        return self._prun(line)

    def cell_prun(self, line, cell):
        """Profile the cell's body."""
        return self._prun(line, cell)
