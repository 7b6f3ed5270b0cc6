"""VMA_OF: Python source that defines, from /proc/self/smaps of the running
process, mapping_finder() (a function from an address to the (start, end,
VmFlags) of the mapping that holds it, for many lookups against one read)
and vma_of(addr) (one lookup): put in front of code that runs in another
process (a child of the test, a job in a sandbox). No '%' in it: a caller
may %-format the code it is put in front of."""

VMA_OF = r'''
import bisect
def mapping_finder():
    maps = []
    for line in open("/proc/self/smaps"):
        p = line.split()
        if not p[0].endswith(":"):
            maps.append(tuple(int(x, 16) for x in p[0].split("-")) + ([],))
        elif p[0] == "VmFlags:":
            maps[-1][2].extend(p[1:])
    starts = [m[0] for m in maps]
    def of(addr):
        i = bisect.bisect_right(starts, addr) - 1
        if i >= 0 and maps[i][0] <= addr < maps[i][1]:
            return maps[i]
    return of
def vma_of(addr):
    return mapping_finder()(addr)
'''
