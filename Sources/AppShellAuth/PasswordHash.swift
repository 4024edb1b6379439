import CSodium

/// Argon2id password hashes in the self-describing `$argon2id$v=19$m=…,t=…,p=…$salt$hash` form.
///
/// The parameters and salt live inside the string, so a stored hash stays verifiable after the
/// defaults change; the INTERACTIVE limits (64 MiB, 2 passes) keep one login cheap enough for a
/// web request while making offline guessing expensive.
public enum PasswordHash {
    /// Hashes `password` with a fresh random salt, so equal passwords give different strings.
    public static func make(password: String) throws(PasswordHashError) -> String {
        guard sodiumIsReady else { throw PasswordHashError(.libraryUnavailable) }
        var output = [CChar](repeating: 0, count: crypto_pwhash_strbytes())
        let status = withPasswordBytes(password) { bytes, count in
            crypto_pwhash_str_alg(
                &output, bytes, count,
                UInt64(crypto_pwhash_opslimit_interactive()), crypto_pwhash_memlimit_interactive(),
                crypto_pwhash_alg_argon2id13())
        }
        // libsodium fails only when it cannot allocate the memory the hash is meant to cost.
        guard status == 0 else { throw PasswordHashError(.hashingFailed) }
        let length = output.firstIndex(of: 0) ?? output.count
        return String(decoding: output[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Tells whether `password` is the one `hash` was made from; false for anything not an Argon2id hash.
    ///
    /// The comparison inside libsodium runs in constant time. The cost follows the parameters
    /// written in `hash`, so only hashes this module made should be passed here.
    public static func verify(password: String, against hash: String) -> Bool {
        guard sodiumIsReady, hasStorableShape(hash) else { return false }
        return withPasswordBytes(password) { bytes, count in
            crypto_pwhash_str_verify(hash, bytes, count)
        } == 0
    }

    /// Tells whether `hash` parses as an Argon2id hash string, without the cost of verifying it.
    ///
    /// Meant for checking stored data (imports, migrations), where a bad record should be found
    /// before a user fails to log in with it.
    public static func isWellFormed(_ hash: String) -> Bool {
        guard sodiumIsReady, hasStorableShape(hash) else { return false }
        let status = crypto_pwhash_str_needs_rehash(
            hash, UInt64(crypto_pwhash_opslimit_interactive()), crypto_pwhash_memlimit_interactive())
        return status != -1
    }

    /// Spends as long as a real `verify` does, for logins naming a user that does not exist.
    ///
    /// Answering such logins at once would tell an attacker which usernames exist; verifying
    /// against a hash made with the same parameters takes the same time. The first call in a
    /// process also pays for making that hash.
    package static func verifyDummy(password: String) {
        guard let dummyHash else { return }
        _ = verify(password: password, against: dummyHash)
    }

    /// The prefix of every hash `make` returns; other algorithms are rejected rather than verified.
    static let argon2idPrefix = "$argon2id$"

    /// Rejects what libsodium would read wrongly: its `char[crypto_pwhash_STRBYTES]` parameter
    /// stops at the first NUL, and it trusts the string to fit in that buffer.
    private static func hasStorableShape(_ hash: String) -> Bool {
        hash.hasPrefix(argon2idPrefix) && hash.utf8.count < crypto_pwhash_strbytes() && !hash.utf8.contains(0)
    }

    /// Passes the password's UTF-8 bytes with an explicit length (a NUL inside a password is
    /// kept), then wipes this copy so it does not linger in freed memory.
    private static func withPasswordBytes(
        _ password: String, _ body: (UnsafePointer<CChar>, UInt64) -> Int32
    ) -> Int32 {
        var bytes = password.utf8CString
        defer { bytes.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) } }
        return bytes.withUnsafeBufferPointer { buffer in
            // `utf8CString` always ends with a NUL, so the buffer is never empty.
            body(buffer.baseAddress!, UInt64(buffer.count - 1))
        }
    }
}

/// Why a password could not be hashed.
public struct PasswordHashError: Error, CustomStringConvertible {
    fileprivate enum Kind {
        case libraryUnavailable
        case hashingFailed
    }

    private let kind: Kind

    fileprivate init(_ kind: Kind) {
        self.kind = kind
    }

    /// A sentence for the log; it never contains the password.
    public var description: String {
        switch kind {
        case .libraryUnavailable: "libsodium could not be initialised"
        case .hashingFailed: "Argon2id hashing failed (most likely out of memory)"
        }
    }
}

/// Whether `sodium_init()` succeeded; a global so Swift runs it exactly once, thread-safely,
/// before the first hash or verification.
/// Whether libsodium initialised (once, on first use, thread-safely as a global).
let sodiumIsReady: Bool = sodium_init() >= 0

/// A hash of a throwaway password, made on first use with the same parameters as real hashes so
/// that verifying against it costs the same; nil only if hashing itself fails.
private let dummyHash: String? = try? PasswordHash.make(password: "appshell-dummy-password-never-matches")
