#!/usr/bin/env python3
"""Generates the NIfTI loader test cases and records what nibabel reports for each.

    python3 make.py                     # (re)write the small cases in this directory
    python3 make.py --synthetic DIR     # record nibabel's view of every NIfTI file under DIR
                                        # into synthetic.expected.json (paths relative to DIR)

Needs `pip install nibabel numpy`. Every case FILE gets FILE.expected.json: either
{"value": {...}} with the header fields as nibabel reports them, in the shape of the
`nifti_header` context field, or {"error": {"code": "NIFTI_HEADER_UNREADABLE"}} for files
nibabel cannot read either.
"""
import gzip
import io
import json
import os
import sys

import numpy as np
import nibabel as nib

HERE = os.path.dirname(os.path.abspath(__file__))


def dim_info_raw(hdr):
    # nibabel reports 0-based axes or None; the context keeps the raw 1-based bit fields.
    return {k: (0 if v is None else int(v) + 1)
            for k, v in zip(("freq", "phase", "slice"), hdr.get_dim_info())}


def fields(img):
    hdr = img.header
    xyz, t = hdr.get_xyzt_units()
    # The context's unit names: nibabel calls micrometres "micron", the schema "um".
    xyz = {"micron": "um"}.get(xyz, xyz)
    return {
        "dim_info": dim_info_raw(hdr),
        "dim": [int(x) for x in hdr["dim"]],
        "pixdim": [float(x) for x in hdr["pixdim"]],
        "shape": [int(x) for x in hdr.get_data_shape()],
        "voxel_sizes": [float(x) for x in hdr.get_zooms()],
        "xyzt_units": {"xyz": xyz, "t": t},
        "qform_code": int(hdr["qform_code"]),
        "sform_code": int(hdr["sform_code"]),
        "axis_codes": [c for c in nib.aff2axcodes(img.affine)],
    }


def record(path, extra=None):
    try:
        value = fields(nib.load(path))
        if extra:
            value.update(extra)
        out = {"value": value}
    except Exception as e:  # nibabel cannot read it: we must report it unreadable too
        print(f"{os.path.basename(path)}: nibabel: {type(e).__name__}: {e}")
        out = {"error": {"code": "NIFTI_HEADER_UNREADABLE"}}
    with open(path + ".expected.json", "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


def rot(axis, deg):
    c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
    m = np.eye(4)
    i, j = [(1, 2), (0, 2), (0, 1)][axis]
    m[i, i], m[i, j], m[j, i], m[j, j] = c, -s, s, c
    return m


def make(name, cls, shape, affine, *, endian="<", zooms=None, units=("mm", "sec"),
         qcode=1, scode=1, dim_info=(None, None, None), dtype="i2", sform=None, mrs=None):
    hdr = cls.header_class(endianness=endian)
    data = np.arange(np.prod(shape), dtype=np.dtype(dtype).newbyteorder(endian)).reshape(shape)
    img = cls(data, affine, header=hdr)
    img.header.set_data_dtype(data.dtype)
    if zooms is not None:
        img.header.set_zooms(zooms)
    img.header.set_xyzt_units(*units)
    img.header.set_dim_info(*dim_info)
    img.set_qform(affine, code=qcode)
    img.set_sform(affine if sform is None else sform, code=scode)
    extra = None
    if mrs is not None:
        payload = json.dumps(mrs).encode()
        img.header.extensions.append(nib.nifti1.Nifti1Extension(44, payload))
        extra = {"mrs": mrs}
    path = os.path.join(HERE, name)
    img.to_filename(path)
    record(path, extra)
    return path


def write(name, data):
    path = os.path.join(HERE, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def gz(data, level=6):
    bio = io.BytesIO()
    with gzip.GzipFile(fileobj=bio, mode="wb", mtime=0, compresslevel=level) as f:
        f.write(data)
    return bio.getvalue()


def main():
    n1, n2 = nib.Nifti1Image, nib.Nifti2Image
    ras = np.diag([2.0, 2.0, 2.5, 1.0])
    ras[:3, 3] = [-10, -12, 5]
    lps = np.diag([-1.0, -1.0, 1.2, 1.0])
    perm = np.array([[0, 0, -1.5, 10], [1.5, 0, 0, -3], [0, 1.5, 0, 7], [0, 0, 0, 1]])
    oblique = rot(0, 30) @ rot(2, -20) @ np.diag([1.1, 0.9, 3.0, 1.0])
    near45 = rot(2, 44) @ np.diag([1.0, 1.0, 1.0, 1.0])

    make("n1_le_3d.nii", n1, (4, 5, 6), ras)
    make("n1_le_3d.nii.gz", n1, (4, 5, 6), ras)
    make("n1_be_4d.nii", n1, (3, 4, 5, 7), lps, endian=">", zooms=(1, 1, 1.2, 2.0),
         dim_info=(0, 1, 2))
    make("n1_be_4d.nii.gz", n1, (3, 4, 5, 7), lps, endian=">", zooms=(1, 1, 1.2, 2.0),
         dim_info=(1, 0, 2))
    make("n1_permuted_msec_um.nii", n1, (3, 3, 3, 2), perm, units=("micron", "msec"),
         zooms=(1.5, 1.5, 1.5, 800))
    make("n1_oblique_qform_only.nii", n1, (3, 4, 5), oblique, scode=0, qcode=2)
    make("n1_oblique_sform_over_qform.nii", n1, (3, 4, 5), oblique, scode=4, qcode=1,
         sform=lps)
    make("n1_no_codes_base_affine.nii.gz", n1, (4, 4, 4), ras, scode=0, qcode=0,
         units=("unknown", "unknown"))
    make("n1_permuted_qform_only.nii", n1, (3, 3, 3), perm, scode=0, qcode=1)
    flip = np.array([[0, 0, 2.0, 0], [0, -1.0, 0, 0], [1.0, 0, 0, 0], [0, 0, 0, 1]])
    make("n1_qfac_negative_qform_only.nii", n1, (3, 3, 3), rot(1, 15) @ flip, scode=0, qcode=1)
    make("n2_qfac_negative_qform_only.nii.gz", n2, (3, 3, 3), rot(0, 70) @ flip, scode=0,
         qcode=1)
    make("n1_near_45_degrees.nii", n1, (3, 3, 3), near45)
    make("n1_2d.nii", n1, (5, 6), ras)
    make("n1_5d.nii.gz", n1, (2, 2, 2, 2, 3), ras, dtype="f4")
    make("n2_le_3d.nii", n2, (4, 5, 6), ras)
    make("n2_le_4d.nii.gz", n2, (3, 4, 5, 6), perm, zooms=(1.5, 1.5, 1.5, 0.5),
         dim_info=(0, 1, 2), units=("meter", "usec"))
    make("n2_be_3d.nii", n2, (4, 3, 2), lps, endian=">", dtype="f8")
    make("n2_be_oblique.nii.gz", n2, (4, 3, 2), oblique, endian=">", scode=0, qcode=1)
    make("n2_mrs.nii.gz", n2, (1, 1, 1, 16), np.eye(4), dtype="c8",
         mrs={"SpectrometerFrequency": [123.25], "ResonantNucleus": ["1H"],
              "dim_5": "DIM_COIL"})

    # Broken inputs: nibabel cannot read them, neither may we (and never panic).
    good = open(os.path.join(HERE, "n1_le_3d.nii"), "rb").read()
    good2 = open(os.path.join(HERE, "n2_le_3d.nii"), "rb").read()
    record(write("bad_truncated_n1.nii", good[:200]))
    record(write("bad_truncated_n2.nii", good2[:500]))
    record(write("bad_empty.nii", b""))
    record(write("bad_text.nii", b"this is not an image\n" * 30))
    bad_magic = bytearray(good)
    bad_magic[344:348] = b"xyz\0"
    record(write("bad_magic.nii", bytes(bad_magic)))
    record(write("bad_not_gzipped.nii.gz", good))
    record(write("bad_truncated_stream.nii.gz", gz(good)[:40]))
    # A gzip bomb: a valid header, then 64 MiB of zeros (compresses to ~64 KiB). Reading the
    # header must inflate only a bounded prefix.
    bomb_hdr = bytearray(good[:352])
    bomb_hdr[348] = 1  # extension flag set, so a reader may look past the header
    bomb = gz(bytes(bomb_hdr) + bytes(64 * 1024 * 1024), level=9)
    path = write("bomb_valid_header.nii.gz", bomb)
    # nibabel would inflate all of it; its header view is that of n1_le_3d.nii's header
    # (the voxel data is not read), with the extension flag set to an empty extension list.
    with open(path + ".expected.json", "w") as f:
        json.dump({"value": fields(nib.load(os.path.join(HERE, "n1_le_3d.nii")))}, f, indent=1)
        f.write("\n")
    write("bomb_zeros.nii.gz", gz(bytes(64 * 1024 * 1024), level=9))
    with open(os.path.join(HERE, "bomb_zeros.nii.gz.expected.json"), "w") as f:
        json.dump({"error": {"code": "NIFTI_HEADER_UNREADABLE"}}, f, indent=1)
        f.write("\n")


def synthetic(root):
    out = {}
    for dirpath, dirs, files in os.walk(root):
        dirs.sort()
        for fn in sorted(files):
            if fn.endswith(".nii") or fn.endswith(".nii.gz"):
                p = os.path.join(dirpath, fn)
                rel = os.path.relpath(p, root)
                try:
                    out[rel] = fields(nib.load(p))
                except Exception as e:
                    print(f"{rel}: {e}")
                    out[rel] = None
    with open(os.path.join(HERE, "synthetic.expected.json"), "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
        f.write("\n")
    print(f"recorded {len(out)} files")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--synthetic":
        synthetic(sys.argv[2])
    else:
        main()
