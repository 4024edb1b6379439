/// A first-in first-out queue on one array: taking from the front moves an index, and the array
/// is emptied (its capacity kept) once every element has been taken. Not synchronized: its owner
/// guards it (the worker pool's queue and the session loader's, under their conditions).
package struct FIFOQueue<Element> {
    private var elements: [Element] = []
    private var head = 0

    /// An empty queue.
    package init() {}

    /// Elements not yet taken.
    package var count: Int { elements.count - head }

    /// Whether every element has been taken.
    package var isEmpty: Bool { head == elements.count }

    /// Adds `element` at the back.
    package mutating func append(_ element: Element) { elements.append(element) }

    /// Takes the element at the front; `nil` when there is none.
    package mutating func popFirst() -> Element? {
        guard head < elements.count else { return nil }
        let element = elements[head]
        head += 1
        if head == elements.count {
            elements.removeAll(keepingCapacity: true)
            head = 0
        }
        return element
    }
}
