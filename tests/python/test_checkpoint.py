"""ts.distributed.checkpoint: a sharded DTensor state dict saved, consolidated and read back by the
`safetensors` package, and loaded into other layouts. Oracles are the NumPy arrays the tensors were
made from (distinct values in every element), never the checkpoint code."""
import numpy as np
import pytest
import safetensors
import safetensors.numpy

import tessera as ts
import tessera.distributed.checkpoint as dcp


def plain(array):
    """A plain tensor (what every rank holds), whatever mode is active."""
    with ts.maybe_disable_local_mode():
        return ts.tensor(array)


def to_np(t):
    return np.array(t.tolist()).reshape(t.shape)


# Distinct values in every element: a misplaced element changes the comparison.
W = (np.arange(7 * 5, dtype=np.float32) * 0.5 + 1.25).reshape(7, 5)
V = (np.arange(4 * 9, dtype=np.int32) * 3 - 50).reshape(4, 9)
R = np.array([2.5, -1.0, 8.75], dtype=np.float32)


def sharded_state(mesh):
    return {
        "w": ts.distribute_tensor(plain(W), mesh, [ts.Shard(0)]),  # 7 rows over 3: 3, 3, 1
        "v": ts.distribute_tensor(plain(V), mesh, [ts.Shard(1)]),  # 9 columns over 3
        "r": ts.distribute_tensor(plain(R), mesh, [ts.Replicate()]),
        "step": 7,
        "lr": 0.25,
        "name": "run-1",
    }


def test_sharded_state_dict_consolidates_to_a_safetensors_file_that_the_safetensors_package_reads(tmp_path):
    checkpoint = str(tmp_path / "ckpt")
    with ts.LocalMode(3):
        mesh = ts.init_device_mesh("cpu", (3,))
        stats = dcp.save(sharded_state(mesh), checkpoint)
    assert stats["bytes_written"] == W.nbytes + V.nbytes + R.nbytes  # one process writes every chunk once
    assert len(stats["files"]) == 1

    consolidated = str(tmp_path / "model.safetensors")
    dcp.consolidate(checkpoint, consolidated)
    tensors = safetensors.numpy.load_file(consolidated)
    assert sorted(tensors) == ["r", "v", "w"]
    for key, want in (("w", W), ("v", V), ("r", R)):
        assert tensors[key].dtype == want.dtype, key
        assert tensors[key].shape == want.shape, key
        np.testing.assert_array_equal(tensors[key], want, err_msg=key)
    with safetensors.safe_open(consolidated, framework="np") as f:
        metadata = f.metadata()
    assert metadata["step"] == "7"
    assert float(metadata["lr"]) == 0.25
    assert metadata["name"] == '"run-1"'


def test_load_into_other_placements_fills_tensors_in_place_and_puts_scalars_back(tmp_path):
    checkpoint = str(tmp_path / "ckpt")
    with ts.LocalMode(3):
        mesh = ts.init_device_mesh("cpu", (3,))
        dcp.save(sharded_state(mesh), checkpoint)
    with ts.LocalMode(6):
        mesh = ts.init_device_mesh("cpu", (2, 3))
        w = ts.distribute_tensor(plain(np.zeros_like(W)), mesh, [ts.Replicate(), ts.Shard(1)])
        v = ts.distribute_tensor(plain(np.zeros_like(V)), mesh, [ts.Shard(0), ts.Shard(1)])
        r = ts.distribute_tensor(plain(np.zeros_like(R)), mesh, [ts.Shard(0), ts.Replicate()])
        state = {"w": w, "v": v, "r": r, "step": 0, "lr": 0.0, "name": ""}
        stats = dcp.load(state, checkpoint)
        assert state["w"] is w and state["v"] is v and state["r"] is r
        np.testing.assert_array_equal(to_np(w.full_tensor().reconcile()).astype(np.float32), W)
        np.testing.assert_array_equal(to_np(v.full_tensor().reconcile()).astype(np.int32), V)
        np.testing.assert_array_equal(to_np(r.full_tensor().reconcile()).astype(np.float32), R)
        # Rank 4 (coordinate (1, 1)) holds columns 2..3 of w (5 columns over 3: 2, 2, 1).
        np.testing.assert_array_equal(to_np(w.to_local().shard(4)).astype(np.float32), W[:, 2:4])
    assert (state["step"], state["lr"], state["name"]) == (7, 0.25, "run-1")
    assert stats["bytes_needed"] > 0 and stats["bytes_read"] >= W.nbytes + V.nbytes + R.nbytes


def test_async_save_stages_the_tensors_before_it_returns(tmp_path):
    checkpoint = str(tmp_path / "ckpt")
    with ts.LocalMode(3):
        mesh = ts.init_device_mesh("cpu", (3,))
        state = sharded_state(mesh)
        pending = dcp.async_save(state, checkpoint)
        state["w"].to_local().fill_(-1.0)  # after the call: not in the checkpoint
        assert pending.result()["chunks_written"] == 3 + 3 + 1  # w and v by 3 ranks, r once
        with pytest.raises(ValueError, match="already called"):
            pending.result()
        back = {"w": ts.distribute_tensor(plain(np.zeros_like(W)), mesh, [ts.Shard(1)])}
        dcp.load(back, checkpoint)
        np.testing.assert_array_equal(to_np(back["w"].full_tensor().reconcile()).astype(np.float32), W)


def test_bad_state_dicts_and_missing_checkpoints_are_clear_errors(tmp_path):
    with pytest.raises(TypeError, match=r"state_dict\['flag'\] is a bool"):
        dcp.save({"flag": True}, str(tmp_path / "a"))
    with pytest.raises(TypeError, match=r"state_dict\['x'\] is list .*expected a ts.Tensor"):
        dcp.save({"x": [1, 2]}, str(tmp_path / "a"))
    with pytest.raises(TypeError, match="keys must be str"):
        dcp.save({3: 1}, str(tmp_path / "a"))
    with pytest.raises(ts.Error, match="there is no checkpoint there"):
        dcp.load({"step": 0}, str(tmp_path / "nowhere"))
    dcp.save({"step": 1}, str(tmp_path / "b"))
    with pytest.raises(ts.Error, match="no entry 'w'"):
        dcp.load({"w": plain(np.zeros(3, dtype=np.float32))}, str(tmp_path / "b"))
