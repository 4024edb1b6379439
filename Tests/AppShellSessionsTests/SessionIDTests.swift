import AppShellConcurrency
import AppShellSessions
import Dispatch
import Testing

@Suite struct SessionIDTests {
    @Test func textIs43Base64URLCharactersAndRoundTrips() throws {
        for _ in 0..<200 {
            let id = SessionID.random()
            let text = id.text
            #expect(text.utf8.count == 43)
            #expect(text.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
            #expect(SessionID(text) == id)
            #expect(SessionID(bytes: id.bytes) == id)
            #expect(id.bytes.count == 32)
        }
    }

    @Test func idsAreDistinct() {
        let ids = Set((0..<10_000).map { _ in SessionID.random() })
        #expect(ids.count == 10_000)
    }

    @Test func idsMadeOnManyThreadsAreDistinctAndTheirBytesEvenlySpread() {
        // Ids come from a pool refilled from the kernel: no byte may be handed out twice, and
        // the bytes must look random (each value about 1/256 of the time: 1 250 of 320 000, the
        // bounds are more than 7 standard deviations away).
        let batches = Locked<[[SessionID]]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let ids = (0..<1_250).map { _ in SessionID.random() }
            batches.withLock { $0.append(ids) }
        }
        let ids = batches.withLock { $0.flatMap { $0 } }
        #expect(Set(ids).count == 10_000)
        var counts = [Int](repeating: 0, count: 256)
        for id in ids { for byte in id.bytes { counts[Int(byte)] += 1 } }
        #expect(counts.allSatisfy { (1_000...1_500).contains($0) })
    }

    @Test(arguments: [
        "",
        "short",
        String(repeating: "A", count: 42),
        String(repeating: "A", count: 44),
        String(repeating: "A", count: 42) + "=",
        String(repeating: "A", count: 42) + "+",
        String(repeating: "A", count: 42) + "/",
        String(repeating: "A", count: 42) + "B",  // non-zero padding bits: not canonical
        String(repeating: "é", count: 21) + "A",
    ])
    func rejectsAnyOtherText(text: String) {
        #expect(SessionID(text) == nil)
    }

    @Test func acceptsTheCanonicalEdgeCases() {
        #expect(SessionID(String(repeating: "A", count: 43))?.bytes == [UInt8](repeating: 0, count: 32))
        let allOnes = [UInt8](repeating: 255, count: 32)
        #expect(SessionID(bytes: allOnes)?.text == String(repeating: "_", count: 42) + "8")
        #expect(SessionID(String(repeating: "_", count: 42) + "8")?.bytes == allOnes)
    }

    @Test func equalityLooksAtEveryByte() throws {
        let id = SessionID.random()
        var bytes = id.bytes
        bytes[31] ^= 1
        #expect(try #require(SessionID(bytes: bytes)) != id)
        bytes = id.bytes
        bytes[0] ^= 0x80
        #expect(try #require(SessionID(bytes: bytes)) != id)
    }

    @Test func descriptionNeverShowsTheWholeID() {
        let id = SessionID.random()
        #expect(!id.description.contains(id.text))
    }
}
