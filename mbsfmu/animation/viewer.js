// The 3D viewer page of mbsfmu (mbsfmu/animation/viewer.py writes the page around this script).
// Reads the scene from <script id="mbs-data">, draws it with three.js and plays it.
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("mbs-data").textContent);

  function bytes(b64) {  // base64 -> the bytes' ArrayBuffer
    const bin = atob(b64);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out.buffer;
  }
  function floats(b64) { return new Float32Array(bytes(b64)); }  // little-endian float32

  const times = floats(D.times);
  const positions = floats(D.positions);   // (n, frames, 3)
  const rotations = floats(D.rotations);   // (n, shaped, 3, 3), row-major
  const n = D.samples, nf = D.frames.length;
  const nshaped = n > 0 ? rotations.length / (9 * n) : 0;

  const view = document.getElementById("view");
  const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  view.appendChild(renderer.domElement);

  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0xffffff);
  scene.add(new THREE.HemisphereLight(0xffffff, 0x888888, 2.0));
  const sun = new THREE.DirectionalLight(0xffffff, 1.5);
  sun.position.set(1, -1, 2);
  scene.add(sun);

  const centre = new THREE.Vector3().fromArray(D.centre);
  const half = D.half;
  const camera = new THREE.PerspectiveCamera(35, 1, half * 0.01, half * 100);
  const up = new THREE.Vector3().fromArray(D.up);  // the model's upward axis: z, or y (planar)
  camera.up.copy(up);
  const offset = up.z ? new THREE.Vector3(3.2, 1.2, 1.0) : new THREE.Vector3(0.6, 1.0, 3.4);
  camera.position.copy(centre).add(offset.multiplyScalar(half));
  const controls = new THREE.OrbitControls(camera, renderer.domElement);
  controls.target.copy(centre);
  controls.update();

  const grid = new THREE.GridHelper(4 * half, 8, 0xbbbbbb, 0xdddddd);
  if (up.z) grid.rotation.x = Math.PI / 2;  // three's grid lies in x-z: turn it into x-y
  grid.position.copy(centre).addScaledVector(up, -1.05 * half);
  scene.add(grid);
  const axes = new THREE.AxesHelper(0.3 * half);  // ISYS: x red, y green, z blue
  scene.add(axes);

  // stick lines and flexible bodies: rods (cylinders) from frame origin to frame origin
  const rodRadius = 0.012 * half;
  const rodGeom = new THREE.CylinderGeometry(1, 1, 1, 12);  // unit radius and length along y
  const lines = D.lines.map(function (ln) {
    const material = new THREE.MeshStandardMaterial({ color: ln.color, roughness: 0.5 });
    const rods = [];
    for (let j = 0; j + 1 < ln.frames.length; j++) {
      const rod = new THREE.Mesh(rodGeom, material);
      scene.add(rod);
      rods.push(rod);
    }
    return { frames: ln.frames, rods: rods };
  });
  // frame origins: small dark points
  const originGeom = new THREE.BufferGeometry();
  originGeom.setAttribute("position", new THREE.BufferAttribute(new Float32Array(3 * nf), 3));
  const origins = new THREE.Points(originGeom, new THREE.PointsMaterial({ color: 0x222222, size: 4, sizeAttenuation: false }));
  origins.frustumCulled = false;
  scene.add(origins);

  // shapes, solid, placed at their frame's pose
  function geometry(s) {
    if (s.shape === "sphere") return new THREE.SphereGeometry(s.size[0], 24, 16);
    if (s.shape === "box") return new THREE.BoxGeometry(s.size[0], s.size[1], s.size[2]);
    if (s.shape === "cylinder") {  // three's cylinder axis is y; the model's is the frame's z
      const g = new THREE.CylinderGeometry(s.size[0], s.size[0], s.size[1], 32);
      g.rotateX(Math.PI / 2);
      return g;
    }
    if (s.shape === "mesh") {  // vertices in the frame (float32), triangles (uint32 indices)
      const g = new THREE.BufferGeometry();
      g.setAttribute("position", new THREE.BufferAttribute(floats(s.vertices), 3));
      g.setIndex(new THREE.BufferAttribute(new Uint32Array(bytes(s.faces)), 1));
      return g;
    }
    throw new Error("unknown shape " + s.shape);
  }
  const shapes = D.shapes.map(function (s) {
    // a mesh's faces are shaded flat (normals from the triangles, none sent), seen from both sides
    const look = s.shape === "mesh" ? { flatShading: true, side: THREE.DoubleSide } : {};
    const mesh = new THREE.Mesh(geometry(s), new THREE.MeshStandardMaterial(
      Object.assign({ color: s.color, roughness: 0.6 }, look)));
    mesh.matrixAutoUpdate = false;
    scene.add(mesh);
    return { frame: s.frame, slot: s.slot, mesh: mesh };
  });

  // frames' axes (x red, y green, z blue) at the frame's pose, and paths of frame origins
  const frameAxes = D.axes.map(function (ax) {
    const helper = new THREE.AxesHelper(0.15 * half);
    helper.matrixAutoUpdate = false;
    scene.add(helper);
    return { frame: ax.frame, slot: ax.slot, mesh: helper };
  });
  const traces = D.traces.map(function (k) {
    const geom = new THREE.BufferGeometry();
    geom.setAttribute("position", new THREE.BufferAttribute(positions.filter(function (_, j) {
      return Math.floor(j / 3) % nf === k;
    }), 3));
    const line = new THREE.Line(geom, new THREE.LineBasicMaterial({ color: 0x555555 }));
    line.frustumCulled = false;
    scene.add(line);
    return geom;
  });

  const markers = [];
  let sample = 0;

  function origin(i, k, out) {
    const o = 3 * (i * nf + k);
    return out.set(positions[o], positions[o + 1], positions[o + 2]);
  }

  const tmp = new THREE.Vector3(), a = new THREE.Vector3(), b = new THREE.Vector3();
  const yAxis = new THREE.Vector3(0, 1, 0);
  function placeRod(rod, a, b) {  // the unit cylinder stretched from a to b
    const length = tmp.subVectors(b, a).length();
    rod.visible = length > 0;
    if (!rod.visible) return;
    rod.quaternion.setFromUnitVectors(yAxis, tmp.divideScalar(length));
    rod.position.addVectors(a, b).multiplyScalar(0.5);
    rod.scale.set(rodRadius, length, rodRadius);
  }
  function pose(i) {
    for (const ln of lines) {
      ln.rods.forEach(function (rod, j) {
        placeRod(rod, origin(i, ln.frames[j], a), origin(i, ln.frames[j + 1], b));
      });
    }
    const oa = originGeom.attributes.position;
    for (let k = 0; k < nf; k++) { origin(i, k, tmp); oa.setXYZ(k, tmp.x, tmp.y, tmp.z); }
    oa.needsUpdate = true;
    for (const s of shapes.concat(frameAxes)) {  // world = r_K + S_K p
      const R = 9 * (i * nshaped + s.slot);
      origin(i, s.frame, tmp);
      s.mesh.matrix.set(rotations[R], rotations[R + 1], rotations[R + 2], tmp.x,
                        rotations[R + 3], rotations[R + 4], rotations[R + 5], tmp.y,
                        rotations[R + 6], rotations[R + 7], rotations[R + 8], tmp.z,
                        0, 0, 0, 1);
      s.mesh.matrixWorldNeedsUpdate = true;
    }
    for (const m of markers) origin(i, m.frame, m.mesh.position);
    for (const g of traces) g.setDrawRange(0, i + 1);  // the path up to this sample
  }

  const slider = document.getElementById("slider");
  const label = document.getElementById("time");
  const button = document.getElementById("play");
  const speed = document.getElementById("speed");
  document.getElementById("title").textContent = D.title;
  slider.max = String(Math.max(n - 1, 0));

  function setSample(i) {
    sample = Math.min(Math.max(Math.round(i), 0), n - 1);
    slider.value = String(sample);
    label.textContent = "t = " + times[sample].toFixed(3) + " s";
    pose(sample);
    render();
  }

  // playing: the clock runs in model time, speed 1 plays D.fps samples per wall-clock second
  const step = n > 1 ? (times[n - 1] - times[0]) / (n - 1) : 1;
  let playing = false, clock = 0, last = 0;
  function play() {
    if (n < 2) return;
    playing = true; button.innerHTML = "&#x275A;&#x275A;";
    clock = times[sample]; last = performance.now();
    requestAnimationFrame(tick);
  }
  function pause() { playing = false; button.innerHTML = "&#x25B6;"; }
  function tick(now) {
    if (!playing) return;
    clock += (now - last) / 1000 * D.fps * step * Number(speed.value);
    last = now;
    if (clock > times[n - 1]) clock = times[0] + (clock - times[n - 1]);  // loop
    let i = sample;
    if (times[i] > clock) i = 0;
    while (i + 1 < n && times[i + 1] <= clock) i++;
    setSample(i);
    requestAnimationFrame(tick);
  }
  button.addEventListener("click", function () { playing ? pause() : play(); });
  slider.addEventListener("input", function () { pause(); setSample(Number(slider.value)); });

  function resize() {
    const w = view.clientWidth, h = view.clientHeight;
    renderer.setSize(w, h);
    camera.aspect = w / Math.max(h, 1);
    camera.updateProjectionMatrix();
    render();
  }
  function render() { renderer.render(scene, camera); }
  controls.addEventListener("change", render);
  window.addEventListener("resize", resize);

  window.mbsViewer = {
    setSample: setSample, play: play, pause: pause, camera: camera, renderer: renderer, controls: controls,
    get sample() { return sample; }, get time() { return times[sample]; },
    get playing() { return playing; }, samples: n, frames: D.frames,
    // a live page (mbsfmu/runner/live.py) replaces the pose of a one-sample scene as a run goes
    setPose: function (t, pos, rot) {
      times[0] = t; positions.set(pos, 0); rotations.set(rot, 0); setSample(0);
    },
    markFrame: function (name, color, radius) {
      const k = D.frames.indexOf(name);
      if (k < 0) throw new Error("no frame " + name);
      const mesh = new THREE.Mesh(new THREE.SphereGeometry(radius || 0.04 * half, 16, 12),
                                  new THREE.MeshBasicMaterial({ color: color, depthTest: false }));
      mesh.renderOrder = 1;  // a marker shows in front of everything
      markers.push({ frame: k, mesh: mesh });
      scene.add(mesh);
      pose(sample); render();
    },
  };
  resize();
  setSample(0);
})();
