import AppShellConcurrency
import Glibc

/// A session identifier: 32 bytes from the system's CSPRNG, written as 43 characters of
/// unpadded base64url in the cookie.
///
/// Two identifiers compare in constant time, so the time a comparison takes says nothing about
/// how many bytes matched.
package struct SessionID: Hashable, Sendable, CustomStringConvertible {
    /// The 32 bytes as four words.
    let words: (UInt64, UInt64, UInt64, UInt64)

    /// The number of characters of the text form.
    package static let textLength = 43

    init(words: (UInt64, UInt64, UInt64, UInt64)) { self.words = words }

    /// A new identifier from the system CSPRNG (getrandom(2), read 256 bytes at a time: a new
    /// session per cookieless request makes this a hot path).
    package static func random() -> SessionID {
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        let filled = withUnsafeMutableBytes(of: &words) { output in
            randomPool.withLock { $0.take(into: output) }
        }
        if filled { return SessionID(words: words) }
        var generator = SystemRandomNumberGenerator()
        return SessionID(words: (generator.next(), generator.next(), generator.next(), generator.next()))
    }

    /// The bytes read from the kernel and not yet handed out.
    private static let randomPool = Locked(RandomPool())

    /// Bytes from getentropy(3), each handed out once and wiped as it goes.
    private struct RandomPool {
        private var bytes = [UInt8](repeating: 0, count: 256)
        private var used = 256

        /// Fills `output` (at most 256 bytes); false when the kernel gave nothing.
        mutating func take(into output: UnsafeMutableRawBufferPointer) -> Bool {
            if used + output.count > bytes.count {
                guard bytes.withUnsafeMutableBytes({ getentropy($0.baseAddress, $0.count) }) == 0 else { return false }
                used = 0
            }
            bytes.withUnsafeMutableBytes { pool in
                let taken = UnsafeMutableRawBufferPointer(rebasing: pool[used..<(used + output.count)])
                output.copyMemory(from: UnsafeRawBufferPointer(taken))
                taken.initializeMemory(as: UInt8.self, repeating: 0)
            }
            used += output.count
            return true
        }
    }

    /// Parses the 43-character base64url text; `nil` for any other text (wrong length,
    /// characters outside the alphabet, or non-zero padding bits).
    package init?(_ text: some StringProtocol) {
        guard text.utf8.count == SessionID.textLength else { return nil }
        // A native string lends its bytes (no copy); anything else is copied first.
        guard
            let words = text.utf8.withContiguousStorageIfAvailable({ SessionID.decode($0) })
                ?? Array(text.utf8).withUnsafeBufferPointer({ SessionID.decode($0) })
        else { return nil }
        self.words = words
    }

    /// Parses the 43-character base64url text given as UTF-8 bytes (a cookie's value as received).
    package init?(utf8 characters: UnsafeBufferPointer<UInt8>) {
        guard characters.count == SessionID.textLength, let words = SessionID.decode(characters) else { return nil }
        self.words = words
    }

    /// The words of 43 base64url characters; `nil` for any other byte or non-zero padding bits.
    /// By hand, not FoundationEssentials' base64 (which has no base64url): every request with a
    /// cookie decodes one, straight from libmicrohttpd's bytes into the words, with no string and
    /// no allocation (the Performance article).
    private static func decode(_ characters: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64, UInt64, UInt64)? {
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        let valid = sextets.withUnsafeBufferPointer { sextets in
            withUnsafeMutableBytes(of: &words) { bytes -> Bool in
                // A byte outside the alphabet has the value 0xFF: its high bits mark the text invalid.
                var invalid: UInt8 = 0
                func value(_ index: Int) -> UInt32 {
                    let value = sextets[Int(characters[index])]
                    invalid |= value
                    return UInt32(value)
                }
                // Ten groups of four characters make 30 bytes.
                for group in 0..<10 {
                    let bits =
                        value(group * 4) << 18 | value(group * 4 + 1) << 12 | value(group * 4 + 2) << 6
                        | value(group * 4 + 3)
                    bytes[group * 3] = UInt8(truncatingIfNeeded: bits >> 16)
                    bytes[group * 3 + 1] = UInt8(truncatingIfNeeded: bits >> 8)
                    bytes[group * 3 + 2] = UInt8(truncatingIfNeeded: bits)
                }
                // The last three make 2 bytes and 2 bits that must be zero for the text to be canonical.
                let bits = value(40) << 12 | value(41) << 6 | value(42)
                bytes[30] = UInt8(truncatingIfNeeded: bits >> 10)
                bytes[31] = UInt8(truncatingIfNeeded: bits >> 2)
                return invalid & 0xC0 == 0 && bits & 3 == 0
            }
        }
        return valid ? words : nil
    }

    /// The base64url alphabet.
    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Each byte's 6-bit value in the alphabet, 0xFF for bytes outside it.
    private static let sextets: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()

    /// The raw 32 bytes.
    package var bytes: [UInt8] { Swift.withUnsafeBytes(of: words) { Array($0) } }

    /// Calls `body` with the 32 bytes, without making an array of them.
    func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try Swift.withUnsafeBytes(of: words, body)
    }

    /// Makes an identifier from 32 raw bytes (as a store keeps them); `nil` for another length.
    package init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { $0.copyBytes(from: bytes) }
        self.words = words
    }

    /// The 43-character base64url text, as sent in the cookie.
    package var text: String { text(prefix: "", suffix: "") }

    /// The text form between `prefix` and `suffix`, made in one piece (a `Set-Cookie` value).
    package func text(prefix: String, suffix: String) -> String {
        var words = self.words
        var prefix = prefix
        var suffix = suffix
        let count = prefix.utf8.count + SessionID.textLength + suffix.utf8.count
        return Swift.withUnsafeBytes(of: &words) { bytes in
            SessionID.alphabet.withUnsafeBufferPointer { alphabet in
                // Written on the stack, then made a string in one copy (ASCII: nothing to repair).
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { characters in
                    prefix.withUTF8 { UnsafeMutableRawBufferPointer(characters).copyBytes(from: $0) }
                    var written = prefix.utf8.count
                    func put(_ bits: UInt32) {
                        characters[written] = alphabet[Int(bits & 63)]
                        written += 1
                    }
                    // Ten groups of three bytes make 40 characters.
                    for group in 0..<10 {
                        let bits =
                            UInt32(bytes[group * 3]) << 16 | UInt32(bytes[group * 3 + 1]) << 8
                            | UInt32(bytes[group * 3 + 2])
                        put(bits >> 18)
                        put(bits >> 12)
                        put(bits >> 6)
                        put(bits)
                    }
                    // The last two bytes make three characters, no padding.
                    let bits = UInt32(bytes[30]) << 10 | UInt32(bytes[31]) << 2
                    put(bits >> 12)
                    put(bits >> 6)
                    put(bits)
                    suffix.withUTF8 {
                        UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: characters[written...]))
                            .copyBytes(from: $0)
                    }
                    return String(
                        decoding: UnsafeBufferPointer(rebasing: characters[..<(written + suffix.utf8.count)]),
                        as: UTF8.self)
                }
            }
        }
    }

    /// The text form, abbreviated: never log a whole live identifier.
    package var description: String { String(text.prefix(8)) + "…" }

    /// Constant-time equality: every byte is compared whatever the earlier ones were.
    package static func == (lhs: SessionID, rhs: SessionID) -> Bool {
        let difference =
            (lhs.words.0 ^ rhs.words.0) | (lhs.words.1 ^ rhs.words.1) | (lhs.words.2 ^ rhs.words.2)
            | (lhs.words.3 ^ rhs.words.3)
        return difference == 0
    }

    /// Hashes the identifier: its first word is enough, the words being uniformly random. (The
    /// standard hashing runs SipHash over it; skipping that took the standard library's
    /// underscored `_rawHashValue(seed:)`, which has no stability promise, for about 160
    /// instructions per request: see the Performance article.)
    package func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
    }

    /// The last word, used to pick a registry shard: not the word the tables hash, or every id of
    /// a shard would share the low bits that pick a table's bucket.
    var shardKey: UInt64 { words.3 }
}
