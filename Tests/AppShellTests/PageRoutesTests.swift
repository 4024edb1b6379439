import AppShell
import AppShellSessions
import AppShellTesting
import Testing

/// A shelf's pages, for the tests: a plain page, one with a typed path parameter, one with two,
/// one with a query member, and a literal that a parameter's pattern would also match.
enum ShelfPage: AppRoutes, Equatable {
    case shelf
    case newBook
    case book(id: Int)
    case chapter(book: Int, chapter: String)
    case search(query: String?)

    static let allCases: [ShelfPage] = [
        .shelf, .newBook, .book(id: 1), .chapter(book: 1, chapter: "a"), .search(query: nil),
    ]

    var path: String {
        switch self {
        case .shelf: "/shelf"
        case .newBook: "/shelf/new"
        case .book: "/shelf/:id"
        case .chapter: "/shelf/:book/chapters/:chapter"
        case .search: "/search"
        }
    }

    var screen: ViewController.Type {
        switch self {
        case .shelf: ShelfPageScreen.self
        case .newBook: ShelfPageScreen.self
        case .book: BookPageScreen.self
        case .chapter: BookPageScreen.self
        case .search: ShelfPageScreen.self
        }
    }
}

final class ShelfPageScreen: ViewController, RestorableScreen { init() { super.init(name: "shelf") } }

final class BookPageScreen: ViewController, RestorableScreen {
    @SceneStorage("id") var bookID = 0
    init() { super.init(name: "book") }
}

/// The probe app with pages: its probe screen is none of them (as a screen a `Route` button
/// shows), the shelf is one.
struct RoutedPagesApp: RoutedApplication {
    typealias Routes = ShelfPage
    func makeFirstScreen() -> ViewController { ContextProbeScreen() }
    func makeCoordinator(root: RootController) -> ContextProbeCoordinator { ContextProbeCoordinator(root: root) }
    func open(_ page: ShelfPage, in app: LiveApp) -> PageRoute { .notFound }
}

/// A screen linking to a page by its case.
final class LinkingScreen: ViewController, View {
    init() { super.init(name: "linking") }
    var body: some View { Link("Chapter one", page: ShelfPage.chapter(book: 3, chapter: "one")) }
}

/// `AppRoutes`: one declaration per page gives its URL and reads the URL back, typed.
@Suite struct PageRoutesTests {
    @Test func aPageWritesItsURLFromItsPattern() {
        #expect(ShelfPage.shelf.url == "/shelf")
        #expect(ShelfPage.book(id: 42).url == "/shelf/42")
        #expect(ShelfPage.chapter(book: 3, chapter: "one two/three").url == "/shelf/3/chapters/one%20two%2Fthree")
        // A parameter the pattern does not name is a query member; one without a value is left out.
        #expect(ShelfPage.search(query: "moby dick&co").url == "/search?query=moby%20dick%26co")
        #expect(ShelfPage.search(query: nil).url == "/search")
    }

    @Test func aURLIsReadBackAsItsPageTyped() {
        #expect(ShelfPage(url: "/shelf") == .shelf)
        #expect(ShelfPage(url: "/shelf/new") == .newBook)
        #expect(ShelfPage(url: "/shelf/7") == .book(id: 7))
        #expect(ShelfPage(url: "/shelf/3/chapters/one%20two%2Fthree") == .chapter(book: 3, chapter: "one two/three"))
        #expect(ShelfPage(url: "/search?query=moby+dick%26co&other=1") == .search(query: "moby dick&co"))
        #expect(ShelfPage(url: "/search") == .search(query: nil))
        // Every page round-trips.
        for page in [ShelfPage.book(id: -3), .chapter(book: 0, chapter: "é"), .search(query: "?&=")] {
            #expect(ShelfPage(url: page.url) == page, "\(page.url)")
        }
    }

    @Test func aURLThatNamesNoPageIsNone() {
        // A parameter that does not decode as its type: no page (a page answers 404).
        #expect(ShelfPage(url: "/shelf/abc") == nil)
        #expect(ShelfPage(url: "/shelf/1.5") == nil)
        #expect(ShelfPage(url: "/shelf/a/chapters/x") == nil)
        #expect(ShelfPage(url: "/shelf/1/2") == nil)
        #expect(ShelfPage(url: "/elsewhere") == nil)
        #expect(ShelfPage(url: "/shelf/%zz") == nil)
        #expect(ShelfPage(url: "/") == nil)
    }

    @Test func thePagePathsAreThePatterns() {
        #expect(
            ShelfPage.pagePaths == ["/shelf", "/shelf/new", "/shelf/:id", "/shelf/:book/chapters/:chapter", "/search"])
    }

    @Test func theVisibleScreensPageIsReadFromItsSceneStorage() {
        let book = BookPageScreen()
        let root = RootController(initial: book, defaults: DefaultsStore())
        defer { withExtendedLifetime(root) {} }
        // No id kept yet: no page of the book's can be written.
        #expect(ShelfPage.showing(book) == nil)
        book.bookID = 12
        #expect(ShelfPage.showing(book) == .book(id: 12))
        #expect(ShelfPage.showing(ShelfPageScreen()) == .shelf)
    }

    @Test func aLinkToAPageHasItsURL() {
        let screen = LinkingScreen()
        let root = RootController(initial: screen, defaults: DefaultsStore())
        let html = withExtendedLifetime(root) { screen.renderHTML() }
        #expect(html.contains(#"href="/shelf/3/chapters/one""#), "\(html)")
    }

    /// `/` leads to the current page; when no page is the visible screen's, it shows it (a
    /// redirect to `/` again would never end). A path no page has is 404, one the app refuses too.
    @Test(arguments: TestMode.allCases)
    func theRootShowsAScreenThatHasNoPage(mode: TestMode) throws {
        var configuration = ShellConfiguration()
        configuration.store = .memory
        configuration.publicDirectory = PageScriptTests.packageRoot.appendingPathComponent("Public").path
        let server = try ShellServer(
            configuration: configuration, application: RoutedPagesApp(), chrome: PageChrome(name: "Pages"))
        let client = try TestServer(mode, responder: try server.makeResponder()).client()
        #expect(try client.get("/").status == 200)
        #expect(try client.get("/").status == 200)
        #expect(try client.get("/elsewhere").status == 404)
        #expect(try client.get("/shelf/abc").status == 404)
        #expect(try client.get("/shelf").status == 404)
        #expect(server.pagePaths == ShelfPage.pagePaths)
    }
}
