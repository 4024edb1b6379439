import CSodium

extension PasswordHash {
    /// Makes glibc change the process's memory map rarely, so that the server's threads do not
    /// wait for a password check's. Call once at start, before the checks (`DemoServer` does).
    ///
    /// libsodium maps each check's 64 MiB with `MAP_POPULATE`: the kernel fills it in (about
    /// 25 ms) holding the process's memory-map lock for reading, and a thread that must change the
    /// map meanwhile waits for all of it. An event loop does when glibc grows its thread's heap
    /// (`mprotect`), or maps or unmaps a large block: measured in `make bench` (f), reads stalled
    /// 15–39 ms that way several times a second, whatever the checks' priority (the p99 of 18 ms
    /// at nice 19). Now each heap grows by 4 MiB beyond what it needs (`M_TOP_PAD`, 128 KiB by
    /// default), and blocks up to 32 MiB come from the heaps (`M_MMAP_THRESHOLD`: where glibc's
    /// own moving threshold ends; setting either option stops it from moving). What a heap keeps
    /// beyond its use is address space until touched; after a burst, up to 4 MiB more per heap stay
    /// resident instead of going back to the kernel.
    public static func reserveHeapHeadroom() { _ = headroomReserved }

    private static let headroomReserved = appshell_sodium_reserve_heap_headroom(4 << 20, 32 << 20) == 1
}
