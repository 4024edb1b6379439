import AppShellAuth
import CSodium
import Glibc
import Testing

/// After `PasswordHash.reserveHeapHeadroom`, a large block comes from a heap, not from a mapping
/// of its own: the server's threads seldom change the memory map, which a password check holds
/// locked while libsodium fills in its 64 MiB.
@Suite struct HeapHeadroomTests {
    @Test func aLargeBlockNoLongerMapsMemoryOfItsOwn() throws {
        PasswordHash.reserveHeapHeadroom()
        let before = appshell_sodium_malloc_mapped_bytes()
        // 16 MiB: above glibc's default threshold (128 KiB, moving up to 32 MiB only after such
        // blocks were freed), below the one set now. Under a sanitizer's malloc both stay 0.
        let block = try #require(malloc(16 << 20))
        defer { free(block) }
        #expect(appshell_sodium_malloc_mapped_bytes() == before)
    }
}
