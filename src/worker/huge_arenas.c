/* huge_arenas.so: CPython's object arenas carved from 2 MiB-aligned,
 * MADV_HUGEPAGE chunks placed next to each other, for the warm Sage worker.
 *
 * Why: a warm call forks the worker and the job's child exits; both cost
 * per mapping and per page-table entry (docs/WARM.md, "Where the CPU of a
 * call back to back goes"). CPython mmaps each 1 MiB arena on its own
 * (obmalloc), wherever the kernel puts it among the libraries Sage's import
 * loads; a mapping smaller than 2 MiB, or one not aligned to 2 MiB, is never
 * a transparent huge page, so the import's arenas were ~10,000 4 KiB
 * page-table entries that every fork copies and every exit tears down (the
 * warm worker's: 26,500 in all before, 16,000 with this). Carved from
 * adjacent 2 MiB chunks they merge into a few mappings in huge pages (one
 * entry per 2 MiB).
 *
 * Loaded by the driver inside the sandbox (memory.huge_arenas: from a memfd,
 * with ctypes) and installed with PyObject_SetArenaAllocator before Sage is
 * imported. No Python headers: PyObjectArenaAllocator is three pointers in
 * every CPython 3. Built without sanitizers (src/worker/meson.build): it is
 * loaded into a python3 that has none. */
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#define CHUNK ((size_t)2 << 20) /* a PMD-sized transparent huge page */

/* CPython's PyObjectArenaAllocator (Include/cpython/objimpl.h). */
struct arena_allocator {
	void *ctx;
	void *(*alloc)(void *ctx, size_t size);
	void (*free)(void *ctx, void *ptr, size_t size);
};

/* The chunk arenas are carved from: [chunk_lo, chunk_end), next free at
 * chunk_next. A job's child inherits it and carves on in its own copy. */
static char *chunk_lo, *chunk_next, *chunk_end;
/* The one arena size carved (the first asked that divides CHUNK: 1 MiB
 * since CPython 3.10, 256 KiB before); any other size is a plain mmap. */
static size_t carved;

static void *map_anon(void *at, size_t size, int flags)
{
	void *p = mmap(at, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* A chunk exactly at `at`, or NULL when something is mapped there. */
static char *chunk_at(char *at)
{
	char *p = map_anon(at, CHUNK, MAP_FIXED_NOREPLACE);
	if (p && p != at) { /* a kernel before 4.17 takes the flag as a hint */
		munmap(p, CHUNK);
		return NULL;
	}
	return p;
}

/* The next chunk: right below the last one (where the kernel's top-down
 * search would look next) or right above it, so the two merge into one
 * mapping; else anywhere, aligned to CHUNK. */
static char *new_chunk(void)
{
	char *p = NULL;
	if (chunk_lo && (uintptr_t)chunk_lo > CHUNK)
		p = chunk_at(chunk_lo - CHUNK);
	if (!p && chunk_end)
		p = chunk_at(chunk_end);
	if (!p) {
		char *q = map_anon(NULL, 2 * CHUNK, 0);
		if (!q)
			return NULL;
		p = (char *)(((uintptr_t)q + CHUNK - 1) & ~(uintptr_t)(CHUNK - 1));
		if (p > q)
			munmap(q, (size_t)(p - q));
		munmap(p + CHUNK, (size_t)(q + CHUNK - p));
	}
	/* Best effort: where THP is "never" the chunk is plain pages. */
	madvise(p, CHUNK, MADV_HUGEPAGE);
	return p;
}

static void *arena_alloc(void *ctx, size_t size)
{
	(void)ctx;
	if (!carved && size >= ((size_t)64 << 10) && size <= CHUNK && CHUNK % size == 0)
		carved = size;
	if (size != carved)
		return map_anon(NULL, size, 0);
	if (chunk_next == chunk_end) {
		char *c = new_chunk();
		if (!c)
			return NULL; /* CPython raises MemoryError */
		chunk_lo = chunk_next = c;
		chunk_end = c + CHUNK;
	}
	void *p = chunk_next;
	chunk_next += size;
	return p;
}

/* As CPython's own: an empty arena goes back to the kernel (the hole it
 * leaves is not carved again; the kernel may place other mappings there). */
static void arena_free(void *ctx, void *ptr, size_t size)
{
	(void)ctx;
	munmap(ptr, size);
}

struct arena_allocator sagebox_huge_arenas = {NULL, arena_alloc, arena_free};
