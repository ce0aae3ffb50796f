#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""OpenCV's T-API on the OpenCL device OpenCV picks (OPENCV_OPENCL_DEVICE):
colour conversion, Gaussian blur, Canny, resize and a morphological opening
of a seeded random image through cv2.UMat, so every call runs an OpenCL
kernel that OpenCV builds once and keeps in its own binary cache
(XDG_CACHE_HOME/opencv/<version>/opencl_cache). Writes the SHA-256 of every
result's bytes to OUT (or prints it): the same in every cache state.

  opencv_tapi.py OUT [WIDTHxHEIGHT]"""
import hashlib
import sys

import cv2
import numpy as np


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else None
    width, height = (int(x) for x in (sys.argv[2] if len(sys.argv) > 2 else "1280x720").split("x"))
    cv2.ocl.setUseOpenCL(True)
    if not (cv2.ocl.haveOpenCL() and cv2.ocl.useOpenCL()):
        sys.exit("opencv_tapi: OpenCV found no OpenCL device (OPENCV_OPENCL_DEVICE=:CPU: for PoCL)")
    rng = np.random.default_rng(7)
    image = cv2.UMat(rng.integers(0, 255, (height, width, 3), dtype=np.uint8))
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    blurred = cv2.GaussianBlur(gray, (7, 7), 1.5)
    edges = cv2.Canny(blurred, 50, 150)
    small = cv2.resize(image, (width // 2, height // 2), interpolation=cv2.INTER_LINEAR)
    opened = cv2.morphologyEx(gray, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
    digest = hashlib.sha256()
    for result in (gray, blurred, edges, small, opened):
        digest.update(result.get().tobytes())
    if out:
        with open(out, "w") as f:
            f.write(digest.hexdigest() + "\n")
    else:
        print(digest.hexdigest())


if __name__ == "__main__":
    main()
