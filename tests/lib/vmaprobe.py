"""VMA_OF: Python source that defines vma_of(addr), the (start, end,
VmFlags) of the mapping of the running process that holds addr, from
/proc/self/smaps: put in front of code that runs in another process (a
child of the test, a job in a sandbox)."""

VMA_OF = r'''
def vma_of(addr):
    cur = None
    for line in open("/proc/self/smaps"):
        p = line.split()
        if not p[0].endswith(":"):
            lo, hi = (int(x, 16) for x in p[0].split("-"))
            cur = (lo, hi) if lo <= addr < hi else None
        elif cur and p[0] == "VmFlags:":
            return cur + (p[1:],)
'''
