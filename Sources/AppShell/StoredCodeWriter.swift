import AppShellJSON

/// Writes lifecycle records' stored codes (`LifecycleRecord.storedCode`) as JSON strings, each
/// different screen name escaped once per writer: one writer per stored snapshot, on the thread
/// that makes its bytes (the store writer's).
///
/// DESIGN: a snapshot's log holds 50 records but only a few different screen names (a session's
/// screens), and the transitions' kinds are a fixed set. Writing every record's name through
/// `JSON.writeString` (a copy of the string, its bytes scanned for escapes, each appended) was
/// most of the 17 000 instructions the codes cost per snapshot (callgrind, README Performance).
/// Here a name is written once, and its bytes — quote and escapes included — are kept in a small
/// array the writer owns, found again by comparing the names (equal small strings compare by
/// their bits); a transition's kind is written from its constant text. Not a shared dictionary:
/// hashing the records cost more than writing them (README, "The store path at scale").
struct StoredCodeWriter {
    /// The names written so far and where their written form (`"` and the escaped name) is in
    /// `written`.
    private var names: [(name: String, start: Int, end: Int)] = []
    private var written: [UInt8] = []
    /// The index in `names` of the name found last (the next record is often of the same screen).
    private var last = 0

    /// Names kept at most: a log with more different names writes the others again each time.
    private static let limit = 16

    /// Appends `records`' stored codes to `output` as a JSON array.
    ///
    /// The array is written into one buffer of a size known in advance (a name's escapes take at
    /// most 6 bytes a byte), then appended at once: appending each code's few bytes to `output`
    /// (`Array.append(contentsOf:)`, about 130 instructions a call) cost more than finding them.
    mutating func writeLog(_ records: [LifecycleRecord], into output: inout [UInt8]) {
        var bound = 2
        for record in records {
            switch record {
            case .screen(let name, _): bound += name.utf8.count * 6 + 4
            case .completion: bound += 12
            }
        }
        let log = [UInt8](unsafeUninitializedCapacity: bound) { buffer, count in
            var at = 0
            func put(_ byte: UInt8) {
                buffer[at] = byte
                at += 1
            }
            func put(_ bytes: UnsafeBufferPointer<UInt8>) {
                for byte in bytes { put(byte) }
            }
            put(UInt8(ascii: "["))
            for index in records.indices {
                if index > 0 { put(UInt8(ascii: ",")) }
                switch records[index] {
                case .screen(let name, let event):
                    let entry = self.entry(for: name)
                    written.withUnsafeBufferPointer { put(UnsafeBufferPointer(rebasing: $0[entry.start..<entry.end])) }
                    put(LifecycleRecord.letter(of: event))
                case .completion(let kind):
                    let code = StoredCodeWriter.quoted(kind)
                    put(UnsafeBufferPointer(start: code.utf8Start, count: code.utf8CodeUnitCount))
                }
                put(UInt8(ascii: "\""))
            }
            put(UInt8(ascii: "]"))
            count = at
        }
        output.append(contentsOf: log)
    }

    /// Where `"` and the escaped `name` are in `written`: written there at its first use.
    private mutating func entry(for name: String) -> (start: Int, end: Int) {
        if !names.isEmpty {
            if names[last].name == name { return (names[last].start, names[last].end) }
            for index in names.indices where index != last && names[index].name == name {
                last = index
                return (names[index].start, names[index].end)
            }
        }
        if names.count == StoredCodeWriter.limit {
            names.removeAll(keepingCapacity: true)
            written.removeAll(keepingCapacity: true)
        }
        let start = written.count
        JSON.writeString(name, into: &written)
        // The closing quote is dropped: the letter follows the name.
        written.removeLast()
        names.append((name, start, written.count))
        last = names.count - 1
        return (start, written.count)
    }

    /// A transition kind's code without its closing quote: `"` then the kind and `c`.
    private static func quoted(_ kind: TransitionKind) -> StaticString {
        switch kind {
        case .root: return "\"rootc"
        case .push: return "\"pushc"
        case .pop: return "\"popc"
        case .present: return "\"presentc"
        case .dismiss: return "\"dismissc"
        }
    }
}
