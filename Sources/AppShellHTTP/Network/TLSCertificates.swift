import AppShellConcurrency
import Glibc

/// What a reload of an HTTPS server's certificate did.
package enum TLSReload: Equatable, Sendable {
    /// New files: new connections get the pair whose certificate has this serial number (hex).
    case loaded(serialNumber: String)
    /// The files hold what they held: nothing changed.
    case unchanged
    /// The new files cannot be used, for this reason: the pair in use stays.
    case failed(String)
}

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
    /// The GnuTLS priorities: TLS 1.3 and 1.2 only, with the ciphers of Mozilla's "intermediate"
    /// profile (ECDHE or DHE key exchange, AES-GCM or ChaCha20-Poly1305; no CBC, no RSA key
    /// exchange, no SHA-1 MACs) and its groups in its order: X25519 first, which browsers, curl and
    /// OpenSSL send a key share for — with P-256 first (GnuTLS's `NORMAL`) each of their TLS 1.3
    /// handshakes took a HelloRetryRequest, one more round trip.
    static let priorities =
        "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305"
        + ":-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:+DHE-RSA"
        + ":-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:+GROUP-SECP384R1:+GROUP-FFDHE2048:%SERVER_PRECEDENCE"

    let certificatePath: String
    let keyPath: String
    private let state: Locked<(current: TLSIdentity, every: [TLSIdentity])>
    /// The files' stamps when they were last loaded, and when last looked at by
    /// `reloadIfFilesChanged()`.
    private let stamps: Locked<(loaded: [FileStamp], seen: [FileStamp])>

    /// Loads the pair at `certificatePath` and `keyPath`; throws when it cannot be used.
    init(certificatePath: String, keyPath: String) throws(TLSIdentity.Failure) {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
        let stamped = [FileStamp(of: certificatePath), FileStamp(of: keyPath)]
        stamps = Locked((stamped, stamped))
        let first = try TLSIdentity.load(certificatePath: certificatePath, keyPath: keyPath)
        state = Locked((first, [first]))
    }

    /// The pair new connections get.
    var current: TLSIdentity { state.withLock { $0.current } }

    /// Loads the files again: a usable new pair becomes the one new connections get.
    func reload() -> TLSReload {
        let stamped = [FileStamp(of: certificatePath), FileStamp(of: keyPath)]
        stamps.withLock { $0 = (stamped, stamped) }
        return load()
    }

    /// Reloads when either file changed since it was last loaded and has stayed as it is since the
    /// previous call (a renewal writes two files, or swaps a link, one after the other: the pair
    /// is read once both have settled). `nil` when there is nothing to load; a pair that cannot be
    /// used is not read again until a file changes again.
    ///
    /// DESIGN: a look at the files' metadata (device, inode, size, change and modification times,
    /// through symbolic links, so that certbot's `live/` links and a Kubernetes secret's swapped
    /// directory count) costs two `stat` calls, cheap enough to run every few seconds; watching with
    /// inotify would need a watch on every directory a link passes through.
    func reloadIfFilesChanged() -> TLSReload? {
        let now = [FileStamp(of: certificatePath), FileStamp(of: keyPath)]
        let settled = stamps.withLock { stamps -> Bool in
            guard now != stamps.loaded else { return false }
            defer { stamps.seen = now }
            guard now == stamps.seen else { return false }
            stamps.loaded = now
            return true
        }
        return settled ? load() : nil
    }

    private func load() -> TLSReload {
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

/// What `stat` says of a file, through symbolic links: it differs when the file was written,
/// replaced or renamed over (all zero when it cannot be looked at).
private struct FileStamp: Equatable {
    var device: UInt64 = 0
    var inode: UInt64 = 0
    var size: Int64 = 0
    var modified = timespec()
    var changed = timespec()

    init(of path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = info.st_mtim
        changed = info.st_ctim
    }

    static func == (a: FileStamp, b: FileStamp) -> Bool {
        a.device == b.device && a.inode == b.inode && a.size == b.size
            && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
            && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
    }
}
