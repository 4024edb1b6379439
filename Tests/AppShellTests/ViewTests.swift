import AppShell
import AppShellJSON
import AppShellSessions
import Testing

/// What a test screen offers.
enum ShelfViewAction: ScreenActions {
    case open(title: String)
    case close
    case remove(title: String, why: String?, password: String?)

    static let allCases: [ShelfViewAction] = [.open(title: ""), .close, .remove(title: "", why: nil, password: nil)]

    var role: ActionRole? {
        if case .close = self { return .close }
        return nil
    }
}

/// A screen that uses every kind of view, with text from the user in each.
final class ShelfViewScreen: Screen<ShelfViewAction>, RestorableScreen, View {
    @AppStorage("owner") var owner = ""
    @SceneStorage("message") var message: String?
    var books = ["Moby-Dick", "<b>Bold</b> & \"quoted\""]

    init() { super.init(name: "shelf") }

    var body: some View {
        if let message { Message(message) }
        Section("Books of \(owner)", footer: "\(books.count) books") {
            List(books) { book in
                Button(book, action: ShelfViewAction.open(title: book))
            }
        }
        Form(action: ShelfViewAction.remove, submitLabel: "Remove") {
            TextField("Title", name: "title", text: owner).maxLength(100).required()
            TextEditor("Why", name: "why", text: "</textarea><script>", lines: 3)
            SecureField("Password", name: "password")
            HiddenField(name: "next", value: "/a\"b")
        }
        .buttonStyle(.destructive)
        Text("Small print").font(.caption).secondary()
        Text("Shelves").font(.headline)
        Link("Elsewhere", destination: "/x?a=1&b=<2>")
        Image("cover.png", label: "A \"cover\"").frame(width: 10)
        RawHTML("<hr>")
        EmptyView()
            .navigationTitle("Shelf of \(owner)")
            .id("shelf-1")
            .toolbar { Button("Close", action: ShelfViewAction.close) }
    }
}

/// A screen's `body` rendered to the page's HTML — every text escaped, with no escape call in the
/// screen — and to `GET /api/state`'s `view`, one tree for both.
@Suite struct ViewTests {
    static func shown() -> (ShelfViewScreen, RootController) {
        let screen = ShelfViewScreen()
        let defaults = DefaultsStore()
        defaults.set("<script>alert(1)</script>", forKey: "owner")
        let root = RootController(initial: screen, defaults: defaults)
        return (screen, root)
    }

    @Test func everyTextIsEscapedByConstruction() {
        let (screen, root) = Self.shown()
        defer { withExtendedLifetime(root) {} }
        screen.message = "Can't <remove> that"
        let html = screen.renderHTML()
        #expect(!html.contains("<script>"))
        #expect(html.hasPrefix(#"<section class="screen screen-shelf" aria-labelledby="shelf-title">"#))
        #expect(
            html.contains(#"<h1 id="shelf-title" tabindex="-1">Shelf of &lt;script&gt;alert(1)&lt;/script&gt;</h1>"#))
        #expect(html.contains(#"<p class="message" role="alert">Can&#39;t &lt;remove&gt; that</p>"#))
        #expect(html.contains("<h2>Books of &lt;script&gt;alert(1)&lt;/script&gt;</h2>"))
        #expect(html.contains(#"<p class="footer">2 books</p>"#))
        #expect(
            html.contains(
                #"<input type="hidden" name="title" value="&lt;b&gt;Bold&lt;/b&gt; &amp; &quot;quoted&quot;">"#))
        #expect(html.contains(#"<button type="submit">&lt;b&gt;Bold&lt;/b&gt; &amp; &quot;quoted&quot;</button>"#))
        #expect(html.contains(#"<textarea id="why" name="why" rows="3">&lt;/textarea&gt;&lt;script&gt;</textarea>"#))
        #expect(
            html.contains(#"<input id="password" name="password" type="password" autocomplete="current-password">"#))
        #expect(html.contains(#"<input type="hidden" name="next" value="/a&quot;b">"#))
        #expect(html.contains(#"maxlength="100" required value="&lt;script&gt;"#))
        #expect(html.contains(#"<button type="submit" class="danger">Remove</button>"#))
        #expect(html.contains(#"<p class="caption secondary">Small print</p>"#))
        #expect(html.contains("<h2>Shelves</h2>"))
        #expect(html.contains(#"<a href="/x?a=1&amp;b=&lt;2&gt;">Elsewhere</a>"#))
        #expect(html.contains(#"<img src="/cover.png" alt="A &quot;cover&quot;" width="10">"#))
        // The escape hatch, named as such, is the only HTML not escaped.
        #expect(html.contains("<hr>"))
        // The navigation bar's items come first, then the content in order.
        let toolbar = html.range(of: #"<nav class="toolbar""#)!.lowerBound
        #expect(toolbar < html.range(of: "Books of")!.lowerBound)
        #expect(html.contains(#"data-action="close" data-role="close""#))
        #expect(html.hasSuffix("</section>"))
        // The page's title is the navigation title.
        #expect(screen.title == "Shelf of <script>alert(1)</script>")
    }

    @Test func theStatesViewDescribesTheSameTree() throws {
        let (screen, root) = Self.shown()
        defer { withExtendedLifetime(root) {} }
        screen.message = "Not now"
        let view = try #require(screen.state())
        #expect(view["title"] == "Shelf of <script>alert(1)</script>")
        #expect(view["message"] == "Not now")
        #expect(view["id"] == "shelf-1")
        #expect(view["toolbar"] == [["type": "button", "label": "Close", "action": "close", "role": "close"]])
        let content = try #require(view["content"]?.arrayValue)
        #expect(
            content.compactMap { $0["type"]?.stringValue } == [
                "message", "section", "form", "text", "text", "link", "image",
            ])
        #expect(content[1]["header"] == "Books of <script>alert(1)</script>")
        #expect(
            content[1]["content"]?.arrayValue?.first?["rows"]?.arrayValue?.last == [
                [
                    "type": "button", "label": "<b>Bold</b> & \"quoted\"", "action": "open",
                    "parameters": ["title": "<b>Bold</b> & \"quoted\""],
                ]
            ])
        let fields = try #require(content[2]["fields"]?.arrayValue)
        #expect(fields.compactMap { $0["name"]?.stringValue } == ["title", "why", "password", "next"])
        #expect(
            fields[0] == [
                "type": "field", "kind": "text", "name": "title", "label": "Title",
                "value": "<script>alert(1)</script>", "required": true, "maxLength": 100,
            ])
        // A password field's value is never sent back.
        #expect(fields[2]["value"] == nil)
        #expect(content[3] == ["type": "text", "text": "Small print", "font": "caption", "secondary": true])
        #expect(content[6] == ["type": "image", "url": "/cover.png", "label": "A \"cover\""])
        // Raw HTML is the page's only: it is not in the JSON.
        #expect(!view.serializedString.contains("<hr>"))
    }

    @Test func aPresentedScreenIsAModalDialog() {
        let (screen, root) = Self.shown()
        defer { withExtendedLifetime(root) {} }
        let sheet = ShelfViewScreen()
        root.present(sheet, animated: false)
        #expect(
            sheet.renderHTML().hasPrefix(
                #"<section class="screen screen-shelf" role="dialog" aria-modal="true" aria-labelledby="shelf-title">"#)
        )
        #expect(!screen.renderHTML().contains("role=\"dialog\""))
    }
}
