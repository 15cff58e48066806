extension Array {
    /// `count` copies of `value`, as `init(repeating:count:)` makes them. That initializer has the
    /// standard library allocate the storage in code that is never specialized, which looks up
    /// the storage's generic type at run time: about 700 instructions an array (callgrind, a fleet
    /// of short connections, where each connection's first tables are made this way). Here the
    /// storage is reserved by code specialized for `Element`, whose type is looked up once.
    /// Internal (its users' inlinable code reaches it): not part of the library's API.
    @inlinable init(filling value: Element, count: Int) {
        self.init()
        reserveCapacity(count)
        for _ in 0..<count { append(value) }
    }
}
