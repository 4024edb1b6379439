import AppShell
import Testing

/// `Shell.isSameSitePath`, which decides whether a `next` path from the client may be opened.
@Suite struct SameSitePathTests {
    @Test(arguments: ["/", "/main", "/main/list?x=1", "/login?next=%2Fmain", "/\u{301}x", "/a//b"])
    func pathsOnThisSiteAreAccepted(path: String) {
        #expect(Shell.isSameSitePath(path))
    }

    /// The last four begin with `/` and a combining mark (or a grapheme joiner), one Character
    /// with it: compared as Characters they passed, though a browser reads `//` or `/\` then a
    /// host (U+034F is ignored in host names). Found while fuzzing the request target.
    @Test(arguments: [
        "", "main", "//evil.example", "/\\evil.example", "https://evil.example", "/x?u=https://evil.example",
        "/a\u{0}b", "/a\nb", "/a\u{7F}", "//\u{34F}evil.example", "//\u{301}evil.example", "/\\\u{301}evil.example",
        "/x://\u{301}y",
    ])
    func pathsThatLeaveTheSiteAreRefused(path: String) {
        #expect(!Shell.isSameSitePath(path))
    }
}
