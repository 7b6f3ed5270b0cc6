"""All of Sage works inside, including the pexpect interfaces (ptys)."""
from conftest import run


def test_seed_self_test_job():
    r = run("R.<x> = QQ[]\nprint(factor(x^4 - 1))\n", lang="sage", timeout=120)
    assert r.out.strip() == "(x - 1) * (x + 1) * (x^2 + 1)", r


def test_maxima_and_gap_via_ptys():
    # GAP and Sage together need more than the 256m default.
    r = run("print(maxima('1+1'))\nprint(gap('1+1'))\n", lang="sage", args=("--memory", "1g"), timeout=180)
    assert [l.strip() for l in r.out.splitlines() if l.strip()] == ["2", "2"], r


def test_sympow_caches_its_data_in_the_sandbox():
    # sympow's cache is the sandbox's own (under DOT_SAGE), so it neither
    # warns that it cannot create one nor uses the host's /var/cache/sympow
    r = run("E = EllipticCurve('11a')\nprint(E.modular_degree())\nprint(E.congruence_number())\n"
            "import os\nd = os.environ['SYMPOW_PKGCACHEDIR']\n"
            "print(d.startswith(os.environ['DOT_SAGE']), 'datafiles' in os.listdir(d))\n",
            lang="sage", args=("--memory", "1g"), timeout=180)
    assert r.rc == 0 and "WARNING" not in r.out + r.err, r
    assert r.out.splitlines()[-3:] == ["1", "1", "True True"], r
    assert "le64" in run("import os\nprint(os.listdir(os.environ['SYMPOW_PKGCACHEDIR'] + '/datafiles'))\n"
                         "E = EllipticCurve('37a'); print(E.modular_degree())\n"
                         "print(os.listdir(os.environ['SYMPOW_PKGCACHEDIR'] + '/datafiles'))",
                         lang="sage", args=("--memory", "1g"), timeout=180).out.splitlines()[-1]


def test_java_finds_its_configuration():
    # Jmol (Sage's 3D viewer and 3D image saver) needs the JDK's /etc
    # configuration (java.security); read-only, like every /etc entry
    # (crypto.policy is set by java.security: listed only when it loaded)
    r = run("java -XshowSettings:security:properties -version 2>&1 | grep -c '^ *crypto.policy='\n"
            "echo x >> /etc/java-17-openjdk/security/java.security && echo WROTE\n",
            lang="shell", args=("--memory", "2g"), timeout=120)
    assert r.out.splitlines()[0] == "1" and "WROTE" not in r.out, r


def test_jmol_saves_a_3d_plot():
    r = run("sphere().save('s.png')\nimport os\nprint(open('s.png', 'rb').read(4) == b'\\x89PNG')\n",
            lang="sage", args=("--memory", "2g"), timeout=300)
    assert r.rc == 0 and r.out.splitlines()[-1:] == ["True"], r


def test_pari_stack_fits_the_memory_limit():
    # Sage lets PARI's stack grow to 1 GiB whatever the limit; under 512m
    # the growth failed with PARI's "not enough memory, new PARI stack"
    # warning in stderr. Sized to the limit: a computation that outgrows
    # the stack gets PARI's own error and no warning, and one that needs
    # a stack many times the initial one still runs.
    r = run("print(pari.stacksizemax() <= 256 * 2^20)\n"
            "print(len(pari('vector(3*10^6, i, i)')))\n"
            "try:\n    pari('vector(2*10^7, i, i)')\nexcept PariError as e:\n    print(str(e).split(' (')[0])\n"
            "print(len(pari('vector(3*10^6, i, i)')))\n",
            lang="sage", args=("--memory", "512m"), timeout=120)
    assert "not enough memory" not in r.err and "Warning" not in r.err, r
    assert r.rc == 0 and r.out.splitlines() == ["True", "3000000", "the PARI stack overflows", "3000000"], r
