"""ts.DeviceMesh and ts.init_device_mesh against the documented mesh layout: coordinates from the row-major
formula, groups, slicing, flattening, PyTorch's constructor and repr, and the errors."""
import math

import numpy as np
import pytest

import tessera as ts


def coordinate(rank, shape):
    """Row-major: coord[i] = (r / prod(shape[i+1:])) % shape[i]."""
    return tuple((rank // math.prod(shape[i + 1:])) % shape[i] for i in range(len(shape)))


def lines_along(dim, shape):
    """The groups along one mesh dim: ranks that differ only in that coordinate, in order."""
    groups = {}
    for rank in range(math.prod(shape)):
        c = coordinate(rank, shape)
        key = c[:dim] + c[dim + 1:]
        groups.setdefault(key, []).append(rank)
    return sorted(groups.values())


def test_golden_4x2_mesh_facts():
    with ts.LocalMode(8):
        mesh = ts.init_device_mesh("cpu", (4, 2), mesh_dim_names=("dp", "tp"))
        assert mesh.shape == (4, 2)
        assert mesh.ndim == 2
        assert mesh.size() == 8
        assert mesh.size(0) == 4 and mesh.size(1) == 2
        assert mesh.mesh_dim_names == ("dp", "tp")
        assert mesh.device_type == "cpu"
        coords = mesh.get_coordinate()
        # Golden: rank 5 -> (2, 1).
        assert (coords[0][5], coords[1][5]) == (2, 1)
        for rank in range(8):
            assert (coords[0][rank], coords[1][rank]) == coordinate(rank, (4, 2))
        assert mesh.get_group("tp").fibres == [[0, 1], [2, 3], [4, 5], [6, 7]]
        assert mesh.get_group("dp").fibres == [[0, 2, 4, 6], [1, 3, 5, 7]]
        assert mesh.get_group(1) == mesh.get_group("tp")
        assert mesh.get_local_rank("tp").values() == {r: r % 2 for r in range(8)}
        assert mesh.get_local_rank(0).values() == {r: r // 2 for r in range(8)}


def test_repr_is_pytorch_style():
    mesh = ts.DeviceMesh("cpu", [[0, 1], [2, 3]], mesh_dim_names=("dp", "tp"))
    assert repr(mesh) == "DeviceMesh('cpu', [[0, 1], [2, 3]], mesh_dim_names=('dp', 'tp'))"
    assert repr(ts.DeviceMesh("cpu", [0, 1, 2])) == "DeviceMesh('cpu', [0, 1, 2])"


def test_pytorch_constructor_takes_nested_lists_and_numpy():
    from_list = ts.DeviceMesh("cpu", [[0, 1, 2], [3, 4, 5]], mesh_dim_names=("a", "b"))
    from_array = ts.DeviceMesh("cpu", np.arange(6).reshape(2, 3), mesh_dim_names=("a", "b"))
    assert from_list == from_array
    assert from_list.shape == (2, 3)
    assert hash(from_list) == hash(from_array)
    with ts.LocalMode(6):
        assert from_list == ts.init_device_mesh("cpu", (2, 3), mesh_dim_names=("a", "b"))
    assert from_list != ts.DeviceMesh("cpu", [[0, 1, 2], [3, 4, 5]])  # names differ


def test_cpp_constructor_with_sibling_fibres():
    mesh = ts.DeviceMesh("cpu", shape=(2,), mesh_dim_names=("tp",), fibres=[[0, 1], [2, 3]])
    assert mesh.fibres == [[0, 1], [2, 3]]
    assert mesh.ranks == [0, 1, 2, 3]
    assert mesh.coordinate_of(3) == [1]


@pytest.mark.parametrize("world", [1, 3, 7])
def test_one_dim_mesh_over_each_world(world):
    with ts.LocalMode(world):
        mesh = ts.init_device_mesh("cpu", (world,))
        assert mesh.size() == world
        assert mesh.mesh_dim_names is None
        assert mesh.get_group().fibres == [list(range(world))]
        rank = mesh.get_local_rank()
        if world == 1:
            assert int(rank) == 0
        else:
            assert rank.values() == {r: r for r in range(world)}


def test_3d_mesh_coordinates_groups_and_slices():
    shape = (2, 3, 4)
    with ts.LocalMode(24):
        mesh = ts.init_device_mesh("cpu", shape, mesh_dim_names=("pp", "dp", "tp"))
        coords = mesh.get_coordinate()
        for rank in range(24):
            assert tuple(c[rank] for c in coords) == coordinate(rank, shape)
        for dim, name in enumerate(("pp", "dp", "tp")):
            assert sorted(mesh.get_group(name).fibres) == lines_along(dim, shape)
        sub = mesh[("dp", "tp")]
        assert sub.shape == (3, 4) and sub.mesh_dim_names == ("dp", "tp")
        assert sorted(sub.fibres) == [list(range(0, 12)), list(range(12, 24))]
        dp = mesh["dp"]
        assert dp.shape == (3,)
        assert sorted(dp.fibres) == lines_along(1, shape)


def test_slicing_by_one_and_several_names():
    with ts.LocalMode(8):
        mesh = ts.init_device_mesh("cpu", (4, 2), mesh_dim_names=("dp", "tp"))
        tp = mesh["tp"]
        assert tp.shape == (2,) and tp.mesh_dim_names == ("tp",) and tp.ndim == 1
        assert tp.fibres == [[0, 1], [2, 3], [4, 5], [6, 7]]
        assert mesh["dp", "tp"] == mesh
        assert mesh[["dp", "tp"]] == mesh


def test_flatten():
    with ts.LocalMode(8):
        mesh = ts.init_device_mesh("cpu", (4, 2), mesh_dim_names=("dp", "tp"))
        flat = mesh.flatten()
        assert flat.shape == (8,)
        assert flat.mesh_dim_names == ("dp_tp",)
        assert flat.fibres == [list(range(8))]
        assert mesh._flatten("world").mesh_dim_names == ("world",)


def test_errors_name_what_was_wrong():
    with ts.LocalMode(8):
        mesh = ts.init_device_mesh("cpu", (4, 2), mesh_dim_names=("dp", "tp"))
        with pytest.raises(ts.Error, match=r"no dim named 'pp'; the dims are \('dp', 'tp'\)"):
            mesh["pp"]
        with pytest.raises(ts.Error, match="no dim named 'pp'"):
            mesh.get_group("pp")
        with pytest.raises(ts.Error, match="has 3 ranks but the world \\(local mode\\) has 8"):
            ts.init_device_mesh("cpu", (3,))
        with pytest.raises(ts.Error, match="'a' appears twice"):
            ts.init_device_mesh("cpu", (4, 2), mesh_dim_names=("a", "a"))
        with pytest.raises(ts.Error, match="1 dim names"):
            ts.init_device_mesh("cpu", (4, 2), mesh_dim_names=("a",))
        with pytest.raises(ts.Error, match="no backend serves device type 'nosuchdev'"):
            ts.init_device_mesh("nosuchdev", (8,))
        unnamed = ts.init_device_mesh("cpu", (4, 2))
        with pytest.raises(ts.Error, match="has no dim names"):
            unnamed["tp"]
        with pytest.raises(TypeError, match="expected a dim name"):
            mesh[3.5]
    with pytest.raises(ValueError, match="ragged"):
        ts.DeviceMesh("cpu", [[0, 1], [2]])
    with pytest.raises(ts.Error):
        ts.DeviceMesh("cpu", [[0, 1], [1, 2]])  # rank 1 twice
