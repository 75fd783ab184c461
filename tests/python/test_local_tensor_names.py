"""PyTorch's LocalTensor names (torch.distributed._local_tensor) on Tessera: the LocalTensor type,
its private accessors, LocalTensorMode over any iterable of ranks, LocalIntNode, SymInt, Size and
the maybe_run_for_local_tensor decorator. Expected values are plain Python lists."""
import pytest

import tessera as ts
from tessera.distributed._local_tensor import (
    LocalIntNode,
    LocalTensor,
    LocalTensorMode,
    maybe_disable_local_tensor_mode,
    maybe_run_for_local_tensor,
    rank_map,
    tensor_map,
)


def test_local_tensors_are_instances_of_local_tensor_and_plain_ones_are_not():
    lt = LocalTensor({0: ts.tensor([1.0, 2.0]), 1: ts.tensor([3.0, 4.0])})
    assert isinstance(lt, LocalTensor) and isinstance(lt, ts.Tensor)
    assert type(lt).__name__ == "LocalTensor"
    plain = ts.tensor([1.0])
    assert type(plain).__name__ == "Tensor" and not isinstance(plain, LocalTensor)
    # Results of ops on local tensors, and factories inside a mode, are local tensors too.
    assert type(lt * 2).__name__ == "LocalTensor"
    with LocalTensorMode(3) as mode:
        assert type(ts.ones(2)).__name__ == "LocalTensor"
        with mode.disable():
            assert type(ts.ones(2)).__name__ == "Tensor"
    same = LocalTensor({0: ts.tensor([5.0]), 1: ts.tensor([5.0])}).reconcile()
    assert type(same).__name__ == "Tensor" and same.tolist() == [5.0]


def test_private_accessors_give_each_ranks_shard():
    lt = LocalTensor({0: ts.tensor([1.0, 2.0]), 2: ts.tensor([5.0, 6.0])})
    assert lt._ranks == frozenset({0, 2})
    shards = lt._local_tensors
    assert sorted(shards) == [0, 2]
    assert shards[0].tolist() == [1.0, 2.0] and shards[2].tolist() == [5.0, 6.0]
    assert lt._local_tensor_2.tolist() == [5.0, 6.0]
    assert type(lt._local_tensor_0).__name__ == "Tensor"


def test_missing_ranks_and_other_names_are_attribute_errors():
    lt = LocalTensor({0: ts.tensor([1.0]), 1: ts.tensor([2.0])})
    with pytest.raises(AttributeError, match=r"rank 5 is not one of its ranks \{0, 1\}"):
        lt._local_tensor_5
    with pytest.raises(AttributeError, match="needs a rank number, got 'x'"):
        lt._local_tensor_x
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        lt.nonsense
    assert not hasattr(lt, "_local_tensor_")
    with pytest.raises(ts.Error, match="empty dict"):
        LocalTensor({})


def test_local_tensor_mode_takes_a_frozenset_or_any_iterable_of_ranks():
    for ranks in (frozenset({0, 2, 5}), {5, 0, 2}, [5, 2, 0], range(0, 6, 2)):
        expected = sorted(ranks)
        with LocalTensorMode(ranks):
            x = ts.ones(1)
            assert sorted(x._ranks) == expected
    with pytest.raises(TypeError, match="ranks must be ints"):
        LocalTensorMode(frozenset({0, "a"}))
    with pytest.raises(ts.Error, match="non-negative"):
        LocalTensorMode({-1, 0})
    with pytest.raises(TypeError, match="an iterable of ranks"):
        LocalTensorMode(2.5)


def test_mode_rank_map_and_tensor_map_run_in_the_mode():
    with LocalTensorMode(3) as mode:
        lt = mode.rank_map(lambda r: ts.full((2,), float(r * r)))
        doubled = mode.tensor_map(lt, lambda r, t: t + r)
        with LocalTensorMode(2):
            with pytest.raises(ts.Error, match="not the innermost"):
                mode.rank_map(lambda r: ts.ones(1))
    assert [lt._local_tensors[r].tolist() for r in range(3)] == [[0.0, 0.0], [1.0, 1.0], [4.0, 4.0]]
    assert [doubled._local_tensors[r].tolist() for r in range(3)] == [[0.0, 0.0], [2.0, 2.0], [6.0, 6.0]]
    with pytest.raises(ts.Error, match="not active"):
        mode.rank_map(lambda r: ts.ones(1))
    assert rank_map is ts.rank_map and tensor_map is ts.tensor_map


def test_local_int_node_methods_work_rank_by_rank():
    a = LocalIntNode({0: 10, 1: 20, 2: -7})
    b = LocalIntNode({0: 3, 1: 6, 2: 2})
    assert a.add(b)._local_ints == {0: 13, 1: 26, 2: -5}
    assert a.sub(b)._local_ints == {0: 7, 1: 14, 2: -9}
    assert a.mul(b)._local_ints == {0: 30, 1: 120, 2: -14}
    assert a.floordiv(b)._local_ints == {0: 10 // 3, 1: 20 // 6, 2: -7 // 2}
    assert a.mod(b)._local_ints == {0: 10 % 3, 1: 20 % 6, 2: -7 % 2}
    assert a.neg()._local_ints == {0: -10, 1: -20, 2: 7}
    assert a.add(5)._local_ints == {0: 15, 1: 25, 2: -2}
    # A method's result stays a LocalIntNode even where every rank agrees (the operator gives an int).
    same = LocalIntNode({0: 1, 1: 2}).mul(LocalIntNode({0: 2, 1: 1}))
    assert isinstance(same, LocalIntNode) and same._local_ints == {0: 2, 1: 2}
    assert LocalIntNode({0: 1, 1: 2}) * LocalIntNode({0: 2, 1: 1}) == 2
    with pytest.raises(ts.Error, match="different ranks"):
        a.add(LocalIntNode({0: 1, 1: 1}))
    with pytest.raises(TypeError, match="expected an int or a LocalInt"):
        a.add(1.5)


def test_sym_int_is_the_type_of_a_size_that_differs_per_rank():
    lt = LocalTensor({0: ts.ones(1, 4), 1: ts.ones(2, 4)})
    assert isinstance(lt.shape[0], ts.SymInt)
    assert not isinstance(lt.shape[1], ts.SymInt) and lt.shape[1] == 4
    assert not isinstance(3, ts.SymInt)


def test_size_is_a_tuple_that_equals_shapes():
    assert ts.Size([2, 3]) == (2, 3) == ts.ones(2, 3).shape
    assert ts.Size([2, 3]) != (3, 2)
    assert isinstance(ts.Size([2]), tuple)
    assert ts.Size([2, 3, 4]).numel() == 24 and ts.Size([]).numel() == 1
    assert repr(ts.Size([2, 3])) == "tessera.Size([2, 3])"


def test_maybe_run_for_local_tensor_as_a_decorator():
    @maybe_run_for_local_tensor
    def block_of(data, rank):
        """Rank's block of two."""
        return data[rank * 2 : rank * 2 + 2]

    assert block_of.__name__ == "block_of" and block_of.__doc__ == "Rank's block of two."
    data = ts.arange(8).float()
    with LocalTensorMode(4):
        ranks = rank_map(lambda r: ts.tensor(r))
        out = block_of(data, ranks)
    assert {r: out._local_tensors[r].tolist() for r in range(4)} == {
        r: [float(2 * r), float(2 * r + 1)] for r in range(4)}
    # Outside a mode with plain arguments it is a plain call.
    assert block_of(data, 1).tolist() == [2.0, 3.0]


def test_maybe_disable_local_tensor_mode_makes_plain_tensors():
    with LocalTensorMode(2):
        with maybe_disable_local_tensor_mode():
            assert type(ts.ones(1)).__name__ == "Tensor"
