import CSodium

/// What the cookie of a session that holds nothing carries after its id in a store shared by
/// several instances, so that the session need not be stored: when it was created and its memo
/// (the app shell's splash start), under an HMAC of a key the instances share.
///
/// A cookieless request writes nothing to a shared store, as to any other (a flood of them had
/// filled Redis). Its next request may reach another instance, which then knows the session only
/// from its cookie: the seal tells it the id was issued by one of the instances (a made-up id is
/// never taken up: it gets a new session, as ever) and what the first instance knew, so it
/// carries on where the first left off. Sealed as `<created>.<memo>.<mac>` (decimal, `memo`
/// empty when there is none, 32 hexadecimal digits), the whole after `<id>.` in the cookie.
struct SessionSeal: Sendable {
    private let key: [UInt8]

    /// What the MAC runs over before the id and the values: this use's name and version.
    private static let label = Array("appshell session seal v1".utf8)

    /// The bytes of the MAC the seal keeps (128 bits of HMAC-SHA-512-256).
    private static let macLength = 16

    /// Seals under `key` (`crypto_auth_keybytes()` bytes; the instances sharing a store share it).
    init(key: [UInt8]) {
        precondition(key.count == crypto_auth_keybytes(), "a seal key has \(crypto_auth_keybytes()) bytes")
        self.key = key
    }

    /// A random key (an instance that shares its store with none).
    static func randomKey() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<crypto_auth_keybytes()).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// The seal of `id`, created at `created` (Unix seconds) with `memo`.
    func seal(_ id: SessionID, created: Int64, memo: Int64?) -> String {
        let text = String(created) + "." + (memo.map { String($0) } ?? "")
        return text + "." + hex(mac(id, text))
    }

    /// The creation time and memo `text` seals for `id`; `nil` when it is not a seal of `id`
    /// under this key.
    func open(_ text: some StringProtocol, for id: SessionID) -> (created: Int64, memo: Int64?)? {
        let parts = text.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let created = Int64(parts[0]), parts[2].utf8.count == Self.macLength * 2 else {
            return nil
        }
        let memo = Int64(parts[1])
        guard parts[1].isEmpty || memo != nil else { return nil }
        let signed = String(parts[0]) + "." + String(parts[1])
        let expected = Array(hex(mac(id, signed)).utf8)
        let given = Array(parts[2].utf8)
        guard sodium_memcmp(given, expected, expected.count) == 0 else { return nil }
        return (created, memo)
    }

    /// The MAC of the label, the id's bytes and `text`, truncated to `macLength` bytes.
    private func mac(_ id: SessionID, _ text: String) -> [UInt8] {
        let message = Self.label + id.bytes + Array(text.utf8)
        var mac = [UInt8](repeating: 0, count: crypto_auth_bytes())
        _ = crypto_auth(&mac, message, UInt64(message.count), key)
        return Array(mac.prefix(Self.macLength))
    }

    private func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 15)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
