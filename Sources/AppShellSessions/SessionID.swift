import Glibc

/// A session identifier: 32 bytes from the system's CSPRNG, written as 43 characters of
/// unpadded base64url in the cookie.
///
/// Two identifiers compare in constant time, so the time a comparison takes says nothing about
/// how many bytes matched.
public struct SessionID: Hashable, Sendable, CustomStringConvertible {
    /// The 32 bytes as four words.
    let words: (UInt64, UInt64, UInt64, UInt64)

    /// The number of characters of the text form.
    public static let textLength = 43

    init(words: (UInt64, UInt64, UInt64, UInt64)) { self.words = words }

    /// A new identifier from the system CSPRNG: one getentropy(3) call (getrandom(2)) for the 32 bytes (a new
    /// session per cookieless request makes this a hot path), else `SystemRandomNumberGenerator`.
    public static func random() -> SessionID {
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        let filled = withUnsafeMutableBytes(of: &words) { getentropy($0.baseAddress, $0.count) == 0 }
        if filled { return SessionID(words: words) }
        var generator = SystemRandomNumberGenerator()
        return SessionID(words: (generator.next(), generator.next(), generator.next(), generator.next()))
    }

    /// Parses the 43-character base64url text; `nil` for any other text (wrong length,
    /// characters outside the alphabet, or non-zero padding bits).
    public init?(_ text: some StringProtocol) {
        guard text.utf8.count == SessionID.textLength else { return nil }
        var text = String(text)
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        var accumulator: UInt32 = 0
        var bits: UInt32 = 0
        var output = 0
        let valid = text.withUTF8 { characters in
            withUnsafeMutableBytes(of: &words) { bytes -> Bool in
                for character in characters {
                    guard let value = SessionID.sextet(character) else { return false }
                    accumulator = accumulator << 6 | UInt32(value)
                    bits += 6
                    if bits >= 8 {
                        bits -= 8
                        // 43 characters carry 258 bits: the 33rd byte would be the 2 padding bits.
                        guard output < 32 else { return false }
                        bytes[output] = UInt8(truncatingIfNeeded: accumulator >> bits)
                        output += 1
                    }
                }
                return true
            }
        }
        // The last 2 bits must be zero for the text to be canonical.
        guard valid, output == 32, accumulator & ((1 << bits) - 1) == 0 else { return nil }
        self.words = words
    }

    /// The 6-bit value of a base64url character, `nil` for any other byte.
    @inline(__always)
    private static func sextet(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): return 62
        case UInt8(ascii: "_"): return 63
        default: return nil
        }
    }

    /// The raw 32 bytes.
    public var bytes: [UInt8] { withUnsafeBytes(of: words) { Array($0) } }

    /// Makes an identifier from 32 raw bytes (as a store keeps them); `nil` for another length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { $0.copyBytes(from: bytes) }
        self.words = words
    }

    /// The 43-character base64url text, as sent in the cookie.
    public var text: String { text(prefix: "", suffix: "") }

    /// The text form between `prefix` and `suffix`, made in one piece (a `Set-Cookie` value).
    public func text(prefix: String, suffix: String) -> String {
        var words = self.words
        var prefix = prefix
        var suffix = suffix
        let count = prefix.utf8.count + SessionID.textLength + suffix.utf8.count
        return withUnsafeBytes(of: &words) { bytes in
            String(unsafeUninitializedCapacity: count) { characters in
                prefix.withUTF8 { UnsafeMutableRawBufferPointer(characters).copyBytes(from: $0) }
                var written = prefix.utf8.count
                func put(_ group: UInt32, _ shift: UInt32) {
                    characters[written] = SessionID.character(UInt8(truncatingIfNeeded: group >> shift & 63))
                    written += 1
                }
                for index in stride(from: 0, to: 32, by: 3) {
                    // The last group holds two bytes: three characters, no padding.
                    let hasThird = index + 2 < 32
                    let group =
                        UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
                        | (hasThird ? UInt32(bytes[index + 2]) : 0)
                    put(group, 18)
                    put(group, 12)
                    put(group, 6)
                    if hasThird { put(group, 0) }
                }
                suffix.withUTF8 {
                    UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: characters[written...]))
                        .copyBytes(from: $0)
                }
                return written + suffix.utf8.count
            }
        }
    }

    /// The base64url character of a 6-bit value.
    @inline(__always)
    private static func character(_ value: UInt8) -> UInt8 {
        switch value {
        case 0..<26: return UInt8(ascii: "A") + value
        case 26..<52: return UInt8(ascii: "a") + value - 26
        case 52..<62: return UInt8(ascii: "0") + value - 52
        case 62: return UInt8(ascii: "-")
        default: return UInt8(ascii: "_")
        }
    }

    /// The text form, abbreviated: never log a whole live identifier.
    public var description: String { String(text.prefix(8)) + "…" }

    /// Constant-time equality: every byte is compared whatever the earlier ones were.
    public static func == (lhs: SessionID, rhs: SessionID) -> Bool {
        let difference =
            (lhs.words.0 ^ rhs.words.0) | (lhs.words.1 ^ rhs.words.1) | (lhs.words.2 ^ rhs.words.2)
            | (lhs.words.3 ^ rhs.words.3)
        return difference == 0
    }

    /// Hashes the identifier (its words are uniformly random).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
    }

    /// The first word, used to pick a registry shard.
    var shardKey: UInt64 { words.0 }
}
