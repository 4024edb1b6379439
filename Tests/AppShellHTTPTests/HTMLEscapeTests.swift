import AppShellHTTP
import Testing

/// `HTML.escape`: the five characters that can end a text or an attribute become references,
/// everything else — other ASCII, any other script, emoji — stays byte for byte.
@Suite struct HTMLEscapeTests {
    @Test(arguments: [
        ("", ""),
        ("plain text", "plain text"),
        ("<script>alert('x')</script>", "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"),
        ("a & b \"c\"", "a &amp; b &quot;c&quot;"),
        ("&amp;", "&amp;amp;"),
        ("Grüße, 日本語 <b>", "Grüße, 日本語 &lt;b&gt;"),
        ("🙂'🙂", "🙂&#39;🙂"),
        ("\u{0}<\u{7F}>", "\u{0}&lt;\u{7F}&gt;"),
    ])
    func escapesTheFiveAndKeepsTheRest(text: String, escaped: String) {
        #expect(HTML.escape(text) == escaped)
    }

    @Test func aLongTextIsEscapedWhole() {
        let text = String(repeating: "ab<c>\"d'&é", count: 1_000)
        let escaped = HTML.escape(text)
        #expect(escaped == String(repeating: "ab&lt;c&gt;&quot;d&#39;&amp;é", count: 1_000))
        // A small string (stored inline) and a substring's copy too.
        #expect(HTML.escape(String("x<y".prefix(3))) == "x&lt;y")
    }
}
