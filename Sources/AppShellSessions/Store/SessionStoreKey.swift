import CSodium

/// What a store keys a session's record by: a hash of the session's id, never the id itself.
///
/// The id is the cookie: whoever reads it from the store (a backup of the SQLite file, a
/// read-only Redis user, `MONITOR`, a subscriber to the relay's channels) could present it and
/// be that user. The store holds BLAKE2b-256 of the id instead (libsodium's `crypto_generichash`
/// over a label and the id's 32 bytes), which names the record and cannot be presented: the
/// server only takes ids, and finding an id from its hash is finding a preimage of BLAKE2b.
///
/// Not a keyed hash: a key guards a hash of guessable inputs (passwords, counters), and ids are
/// 256 random bits from the system's CSPRNG, which no one can enumerate. A key would also have to
/// be shared by every instance on a Redis store — kept in Redis, where the reader it should
/// guard against reads it too — and lost with a backup it was not copied into. The label keeps
/// this hash apart from any other use of the id's bytes (the form tokens' HMAC).
package struct SessionStoreKey: Hashable, Sendable {
    /// The 32 bytes of the hash, as the words of an identifier: it is written as the cookie's
    /// base64url is (`text(prefix:suffix:)`), and never handed out as a session's id.
    private let digest: SessionID

    /// The number of bytes of the hash.
    static let byteCount = 32

    /// What the hash runs over before the id: this use's name and version.
    private static let label = Array("appshell session store key v1".utf8)

    /// The store key of `id`.
    package init(_ id: SessionID) {
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        let label = SessionStoreKey.label
        withUnsafeMutableBytes(of: &words) { output in
            id.withUnsafeBytes { id in
                // The label, then the id, on the stack: hashed in one call (libsodium's streaming
                // state is an over-aligned C type that Swift does not import).
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: label.count + id.count) { input in
                    _ = input.initialize(from: label)
                    UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: input[label.count...]))
                        .copyMemory(from: id)
                    // Unkeyed, 32 bytes out: it fails only for sizes outside BLAKE2b's range.
                    _ = crypto_generichash(
                        output.baseAddress!.assumingMemoryBound(to: UInt8.self), SessionStoreKey.byteCount,
                        input.baseAddress, UInt64(input.count), nil, 0)
                }
            }
        }
        digest = SessionID(words: words)
    }

    /// The 32 bytes (as SQLite keys its rows).
    package var bytes: [UInt8] { digest.bytes }

    /// Calls `body` with the 32 bytes, without making an array of them.
    func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try digest.withUnsafeBytes(body)
    }

    /// The 43 characters of unpadded base64url between `prefix` and `suffix` (a Redis key).
    func text(prefix: String, suffix: String) -> String { digest.text(prefix: prefix, suffix: suffix) }

    /// The 43 characters of unpadded base64url (what the relay's messages carry).
    package var text: String { digest.text }

    /// The key whose 32 bytes are `bytes` (as SQLite keys its rows), if they are 32.
    init?(bytes: [UInt8]) {
        guard let digest = SessionID(bytes: bytes) else { return nil }
        self.digest = digest
    }

    /// The key `text` writes, if it is one.
    package init?(text: some StringProtocol) {
        guard let digest = SessionID(text) else { return nil }
        self.digest = digest
    }
}

extension SessionID {
    /// What a store keys this session's record by (see `SessionStoreKey`).
    package var storeKey: SessionStoreKey { SessionStoreKey(self) }
}
