import AppShellConcurrency

/// The certificate an HTTPS server presents, and the ones it presented before: a reload loads the
/// configured files again and gives new connections the new pair; connections already open keep
/// the one their handshake used.
///
/// DESIGN: libmicrohttpd reads its certificate once, when a daemon starts; restarting the daemons
/// would drop every open connection and event stream. So the daemons start with the first pair,
/// and each new connection is handed the current pair's GnuTLS credentials before its handshake
/// (`appshell_mhd_use_tls_credentials`, when libmicrohttpd reports the connection started). A
/// TLS session uses its credentials for as long as it lives, so every pair loaded stays in memory
/// until the server is gone: a few KiB per reload that changed something (a reload of unchanged
/// files keeps nothing new), which a renewal every few weeks never makes much of.
final class TLSCertificates: Sendable {
    /// What a reload did.
    enum Reload: Equatable, Sendable {
        /// New files: new connections get the pair with this serial number.
        case loaded(serialNumber: String)
        /// The files hold what they held: nothing changed.
        case unchanged
        /// The new files cannot be used (the reason): the pair in use stays.
        case failed(String)
    }

    /// The GnuTLS priorities: TLS 1.3 and 1.2 only, with the ciphers of Mozilla's "intermediate"
    /// profile (ECDHE or DHE key exchange, AES-GCM or ChaCha20-Poly1305; no CBC, no RSA key
    /// exchange, no SHA-1 MACs).
    static let priorities =
        "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305"
        + ":-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:+DHE-RSA:%SERVER_PRECEDENCE"

    let certificatePath: String
    let keyPath: String
    private let state: Locked<(current: TLSIdentity, every: [TLSIdentity])>

    /// Loads the pair at `certificatePath` and `keyPath`; throws when it cannot be used.
    init(certificatePath: String, keyPath: String) throws(TLSIdentity.Failure) {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
        let first = try TLSIdentity.load(certificatePath: certificatePath, keyPath: keyPath)
        state = Locked((first, [first]))
    }

    /// The pair new connections get.
    var current: TLSIdentity { state.withLock { $0.current } }

    /// Loads the files again: a usable new pair becomes the one new connections get.
    func reload() -> Reload {
        let loaded: TLSIdentity
        do {
            loaded = try TLSIdentity.load(certificatePath: certificatePath, keyPath: keyPath)
        } catch {
            return .failed(error.description)
        }
        return state.withLock { state in
            guard !loaded.hasSameFiles(as: state.current) else { return .unchanged }
            state.current = loaded
            state.every.append(loaded)
            return .loaded(serialNumber: loaded.serialNumber)
        }
    }
}
