import AppShellHTTP

/// The checks the shell makes of what a client sends — where a request comes from, whether it may
/// change anything, whether a path it names stays on this site — each written once, here.
/// `ShellRequestContext` gives their verdicts to the handlers; no handler makes them by hand.
enum RequestChecks {
    /// A state-changing request whose `Origin` is another site is refused (403): a page elsewhere
    /// must not act for the user. Requests without `Origin` (curl) pass. The `Host` this compares
    /// with is one the server serves (the HTTP layer's allowed hosts refused any other before
    /// this runs): comparing with `Host` alone does not stop DNS rebinding. Hosts compare
    /// case-insensitively, as browsers lowercase the origin they send.
    static func checkOrigin(_ request: Request) throws {
        guard let origin = request.headers["Origin"] else { return }
        let host = (request.headers["Host"] ?? "").lowercased()
        let sent = origin.lowercased()
        guard !host.isEmpty, sent == "http://" + host || sent == "https://" + host else {
            throw HTTPError(.forbidden, "requests from \(origin) are not accepted")
        }
    }

    /// Whether `request` must change nothing (RFC 9110 §9.2.1): a HEAD, or a GET a browser sends
    /// ahead of a navigation that may never happen (`Sec-Purpose: prefetch`, also with
    /// `;prerender`, and the older `Purpose: prefetch`).
    static func isSafeOnly(_ request: Request) -> Bool {
        if request.method == .head { return true }
        if let purpose = request.headers["Sec-Purpose"] ?? request.headers["Purpose"] {
            return purpose.lowercased().hasPrefix("prefetch")
        }
        return false
    }

    /// Whether `request` is a navigation another site started (`Sec-Fetch-Site: cross-site` or
    /// `same-site`: a link, a form or a redirect from a page elsewhere, a sibling subdomain
    /// included). A direct navigation (`none`: typed, bookmarked, a notification opened) and this
    /// site's own (`same-origin`) are not; nor is a request without the field (curl, a browser
    /// from before 2020), which the other checks (a form token, `Origin`) still guard.
    static func isFromAnotherSite(_ request: Request) -> Bool {
        guard let site = request.headers["Sec-Fetch-Site"]?.lowercased() else { return false }
        return site == "cross-site" || site == "same-site"
    }

    /// The longest path `isSameSitePath` accepts, in UTF-8 bytes: a `next` names a page of the app,
    /// and what a session keeps of it (its login screen, its snapshot, its page) must stay small —
    /// a 7 000-byte `next` made a session cost 52 KiB of memory (issue 31, finding 2).
    static let maxPathBytes = 512

    /// Whether `path` is a path on this site, of at most `maxPathBytes`: one leading slash, no
    /// scheme, no backslash, no control characters — never a way to send the user elsewhere. Checked on the UTF-8 bytes:
    /// compared as Characters, `/` and a combining mark after it are one, so `//\u{34F}evil.example`
    /// (which a browser reads as the host `evil.example`, the mark ignored) had passed.
    static func isSameSitePath(_ path: String) -> Bool {
        guard path.utf8.count <= maxPathBytes else { return false }
        let bytes = Array(path.utf8)
        guard bytes.first == UInt8(ascii: "/"), bytes.count < 2 || bytes[1] != UInt8(ascii: "/") else { return false }
        if bytes.contains(where: { $0 == UInt8(ascii: "\\") || $0 < 0x20 || $0 == 0x7F }) { return false }
        return !bytes.indices.dropLast(2).contains { index in
            bytes[index] == UInt8(ascii: ":") && bytes[index + 1] == UInt8(ascii: "/")
                && bytes[index + 2] == UInt8(ascii: "/")
        }
    }
}

extension Shell {
    /// Whether `path` is a path on this site (see `RequestChecks.isSameSitePath`): an app checks a
    /// `next` parameter with it before it opens the path.
    public static func isSameSitePath(_ path: String) -> Bool { RequestChecks.isSameSitePath(path) }
}
