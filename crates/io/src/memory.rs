//! Process-wide memory settings for the subcommands whose heaps are large and touched once:
//! transparent huge pages off.

/// Stop the kernel from backing this process's memory with transparent huge pages from now on
/// (`prctl(PR_SET_THP_DISABLE)`, Linux; elsewhere nothing happens). Memory already faulted in
/// keeps its pages; child processes inherit the setting.
///
/// Why: the allocator (mimalloc) asks for huge pages on its arenas (`MADV_HUGEPAGE`), so on a
/// kernel whose THP mode is `madvise` (or `always`) every first touch of a fresh 2 MiB region
/// zeroes all of it, however little of it is then used. On the project's 2-core VM, measured
/// alternately on the 100k benchmarks (`benches/rag.md`): `rag` on passages and answers 5–9 %
/// less wall time in three A/Bs, peak RSS 8–15 MB lower on both rag files, the ids file's time
/// unchanged. `trec` moved between −17 % and +6 % from minute to minute (no clear gain: its
/// arrays are dense; 5 % slower in a 15-pair re-check, `benches/trec.md`), so it does not call
/// this. `crb eval` does since 2026-12-07 (`benches/crb.md`): on the 970-row bank alternated
/// with CommonRouterBench's own evaluation, median CPU 0.70 s with them against 0.47–0.62 s
/// without (three runs of `benches/crb_side_by_side.py`), because with huge
/// pages a run straight after a large process stalls in the kernel's compaction; on a
/// quiet machine the two settings are within the noise (an earlier measurement had it 12 %
/// slower without them). Neither calls it when a child process would inherit the setting
/// (`rag --embed-cmd`, `crb eval --predictor cmd:`).
///
/// Returns whether the setting took effect (false off Linux, or when the kernel refused it);
/// either way the results are the same, only speed and memory differ.
pub fn transparent_huge_pages_off() -> bool {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        rustix::thread::disable_transparent_huge_pages(true).is_ok()
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    /// On Linux the kernel reports the flag set afterwards (the test process keeps it; it
    /// changes no result, only which pages back memory).
    #[test]
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn huge_pages_off_sets_the_flag() {
        assert!(super::transparent_huge_pages_off());
        assert_eq!(
            rustix::thread::transparent_huge_pages_are_disabled().ok(),
            Some(true)
        );
    }
}
