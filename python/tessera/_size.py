"""ts.Size (PyTorch: torch.Size): a shape as a tuple of sizes."""


class Size(tuple):
    """A tensor's shape, a tuple of sizes (ints, or ts.LocalInt where a size differs per rank):
    ts.Size([2, 3]) == (2, 3). t.shape is a plain tuple, which compares equal to it."""

    __slots__ = ()

    def numel(self):
        """The number of elements a tensor of this shape holds (the product of the sizes)."""
        count = 1
        for size in self:
            count = count * size
        return count

    def __repr__(self):
        return "tessera.Size(" + repr(list(self)) + ")"
