/*
 * mbs_python.c -- the Python binding of the engine: one extension module per model.
 *
 * The module (named @MODULE@ by mbsfmu.codegen.compile.compile_engine) exposes the model's
 * layout (sizes(), names(), kinds(), starts(), guid()) and the type Instance, a thin wrapper of
 * mbs_instance (mbs_instance.h): set/get values, configure the formulation, start, do_step,
 * run over a whole grid in one call (no Python per step), multipliers, directional derivatives,
 * save/restore.  Errors raise EngineError with the instance's message; run() returns its status
 * instead, so that the caller keeps the rows reached before a failure.
 *
 * While run() integrates without Python callables (inputs or time parameters as functions of t)
 * it releases the GIL; every `every` seconds of wall time it takes the GIL back to let Python
 * handle signals (Ctrl-C) and to call the progress function.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <math.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "mbs_instance.h"
#include "mbs_sensitivity.h"

static PyObject *EngineError;

typedef struct {
    PyObject_HEAD
    mbs_instance *inst;
    PyObject *input_fn;   /* callable(t) -> nu values, or NULL */
    PyObject *tp_fn;      /* callable(t) -> ntp values, or NULL */
    int busy;             /* run() is integrating with the GIL released */
    int sizes[16];
} InstanceObject;

static int check_idle(InstanceObject *self)
{
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the engine instance is running in another thread");
        return 0;
    }
    return 1;
}

static PyObject *engine_error(InstanceObject *self)
{
    PyErr_SetString(EngineError, mbs_inst_message(self->inst));
    return NULL;
}

/* ---- callbacks into Python (called with the GIL held) */

static int fill_from_python(PyObject *fn, double t, double *out, int n, const char *what)
{
    PyObject *res = PyObject_CallFunction(fn, "d", t);
    PyArrayObject *arr;
    if (res == NULL)
        return 1;
    arr = (PyArrayObject *)PyArray_FROMANY(res, NPY_DOUBLE, 0, 1, NPY_ARRAY_CARRAY_RO);
    Py_DECREF(res);
    if (arr == NULL)
        return 1;
    if (PyArray_SIZE(arr) != n) {
        PyErr_Format(PyExc_ValueError, "the %s function returned %zd values, %d expected", what,
                     (Py_ssize_t)PyArray_SIZE(arr), n);
        Py_DECREF(arr);
        return 1;
    }
    memcpy(out, PyArray_DATA(arr), sizeof(double) * (size_t)n);
    Py_DECREF(arr);
    return 0;
}

static int input_cb(void *ctx, double t, double *u)
{
    InstanceObject *self = (InstanceObject *)ctx;
    if (PyErr_Occurred())
        return 1;
    return fill_from_python(self->input_fn, t, u, self->sizes[2], "inputs");
}

static int tp_cb(void *ctx, double t, double *tp)
{
    InstanceObject *self = (InstanceObject *)ctx;
    if (PyErr_Occurred())
        return 1;
    return fill_from_python(self->tp_fn, t, tp, self->sizes[3], "time-parameter");
}

/* ---- helpers */

static PyArrayObject *as_vrs(PyObject *obj)
{
    return (PyArrayObject *)PyArray_FROMANY(obj, NPY_UINT32, 0, 1, NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST);
}

static PyArrayObject *as_doubles(PyObject *obj)
{
    return (PyArrayObject *)PyArray_FROMANY(obj, NPY_DOUBLE, 0, 1, NPY_ARRAY_CARRAY_RO);
}

static PyObject *new_vector(npy_intp n, const double *data)
{
    PyObject *a = PyArray_SimpleNew(1, &n, NPY_DOUBLE);
    if (a != NULL && n > 0)
        memcpy(PyArray_DATA((PyArrayObject *)a), data, sizeof(double) * (size_t)n);
    return a;
}

/* ---- Instance */

static PyObject *Instance_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    InstanceObject *self;
    (void)args;
    (void)kw;
    self = (InstanceObject *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->inst = (mbs_instance *)PyMem_Calloc(1, mbs_instance_size());
    if (self->inst == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    mbs_inst_init(self->inst);
    mbs_model_sizes(self->sizes);
    return (PyObject *)self;
}

static void Instance_dealloc(InstanceObject *self)
{
    Py_XDECREF(self->input_fn);
    Py_XDECREF(self->tp_fn);
    PyMem_Free(self->inst);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Instance_set(InstanceObject *self, PyObject *args)
{
    PyObject *ovr, *oval;
    PyArrayObject *vr, *val;
    int rc;
    if (!check_idle(self) || !PyArg_ParseTuple(args, "OO", &ovr, &oval))
        return NULL;
    vr = as_vrs(ovr);
    val = vr ? as_doubles(oval) : NULL;
    if (val == NULL) {
        Py_XDECREF(vr);
        return NULL;
    }
    if (PyArray_SIZE(vr) != PyArray_SIZE(val)) {
        Py_DECREF(vr);
        Py_DECREF(val);
        return PyErr_Format(PyExc_ValueError, "%zd value references but %zd values",
                            (Py_ssize_t)PyArray_SIZE(vr), (Py_ssize_t)PyArray_SIZE(val));
    }
    rc = mbs_inst_set(self->inst, (size_t)PyArray_SIZE(vr), (const unsigned *)PyArray_DATA(vr),
                      (const double *)PyArray_DATA(val));
    Py_DECREF(vr);
    Py_DECREF(val);
    if (rc != MBS_OK)
        return engine_error(self);
    Py_RETURN_NONE;
}

static PyObject *Instance_get(InstanceObject *self, PyObject *args)
{
    PyObject *ovr, *out;
    PyArrayObject *vr;
    npy_intp n;
    if (!check_idle(self) || !PyArg_ParseTuple(args, "O", &ovr))
        return NULL;
    vr = as_vrs(ovr);
    if (vr == NULL)
        return NULL;
    n = PyArray_SIZE(vr);
    out = PyArray_SimpleNew(1, &n, NPY_DOUBLE);
    if (out != NULL && mbs_inst_get(self->inst, (size_t)n, (const unsigned *)PyArray_DATA(vr),
                                    (double *)PyArray_DATA((PyArrayObject *)out)) != MBS_OK) {
        Py_DECREF(out);
        out = engine_error(self);
    }
    Py_DECREF(vr);
    return out;
}

static PyObject *Instance_configure(InstanceObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"formulation", "alpha", "beta", "rank_tol", "newton_tol", "newton_max",
                            "weighting", "iterations", "cond_max", "dependent", "aba", "method", NULL};
    int kind, newton_max = -1, weighting = -1, iterations = -1, aba = 1, method = 0;
    double alpha = NAN, beta = NAN, rank_tol = NAN, newton_tol = NAN, cond_max = NAN;
    PyObject *odep = Py_None;
    mbs_form *fm;
    if (!check_idle(self) ||
        !PyArg_ParseTupleAndKeywords(args, kw, "i|ddddiiidOpi", names, &kind, &alpha, &beta, &rank_tol,
                                     &newton_tol, &newton_max, &weighting, &iterations, &cond_max,
                                     &odep, &aba, &method))
        return NULL;
    if (mbs_inst_set_formulation(self->inst, kind) != MBS_OK ||
        mbs_inst_set_method(self->inst, method) != MBS_OK)
        return engine_error(self);
    fm = mbs_inst_form(self->inst);
    if (!isnan(alpha))
        fm->alpha = alpha;
    if (!isnan(beta))
        fm->beta = beta;
    if (!isnan(rank_tol))
        fm->rank_tol = rank_tol;
    if (!isnan(newton_tol))
        fm->newton_tol = newton_tol;
    if (newton_max >= 0)
        fm->newton_max = newton_max;
    if (weighting >= 0)
        fm->weighting = weighting;
    if (iterations >= 1)
        fm->iterations = iterations;
    if (!isnan(cond_max))
        fm->cond_max = cond_max;
    if (odep != Py_None) {
        Py_buffer dep;
        int rc;
        if (PyObject_GetBuffer(odep, &dep, PyBUF_SIMPLE) != 0)
            return NULL;
        if (dep.len != self->sizes[0]) {
            PyBuffer_Release(&dep);
            PyErr_Format(PyExc_ValueError, "dependent: %d flags expected", self->sizes[0]);
            return NULL;
        }
        rc = mbs_inst_set_partition(self->inst, (const unsigned char *)dep.buf);
        PyBuffer_Release(&dep);
        if (rc != MBS_OK)
            return engine_error(self);
    }
    mbs_inst_use_aba(self->inst, aba);
    Py_RETURN_NONE;
}

static PyObject *Instance_set_functions(InstanceObject *self, PyObject *args)
{
    PyObject *inputs, *tps;
    if (!check_idle(self) || !PyArg_ParseTuple(args, "OO", &inputs, &tps))
        return NULL;
    Py_XDECREF(self->input_fn);
    Py_XDECREF(self->tp_fn);
    self->input_fn = inputs == Py_None ? NULL : (Py_INCREF(inputs), inputs);
    self->tp_fn = tps == Py_None ? NULL : (Py_INCREF(tps), tps);
    mbs_inst_set_input_fn(self->inst, self->input_fn ? input_cb : NULL, self);
    mbs_inst_set_tp_fn(self->inst, self->tp_fn ? tp_cb : NULL, self);
    Py_RETURN_NONE;
}

static PyObject *Instance_set_time(InstanceObject *self, PyObject *args)
{
    double t0, t_stop = INFINITY;
    if (!check_idle(self) || !PyArg_ParseTuple(args, "d|d", &t0, &t_stop))
        return NULL;
    if (mbs_inst_set_time(self->inst, t0, t_stop) != MBS_OK)
        return engine_error(self);
    Py_RETURN_NONE;
}

/* start(hold=None) -> None, or the warning text */
static PyObject *Instance_start(InstanceObject *self, PyObject *args)
{
    PyObject *ohold = Py_None;
    Py_buffer hold;
    int rc;
    if (!check_idle(self) || !PyArg_ParseTuple(args, "|O", &ohold))
        return NULL;
    if (ohold != Py_None) {
        if (PyObject_GetBuffer(ohold, &hold, PyBUF_SIMPLE) != 0)
            return NULL;
        if (hold.len != self->sizes[0]) {
            PyBuffer_Release(&hold);
            return PyErr_Format(PyExc_ValueError, "hold needs %d bytes", self->sizes[0]);
        }
        rc = mbs_inst_start(self->inst, (const unsigned char *)hold.buf);
        PyBuffer_Release(&hold);
    } else {
        rc = mbs_inst_start(self->inst, NULL);
    }
    if (PyErr_Occurred())
        return NULL; /* a Python input or time-parameter function raised */
    if (rc == MBS_ERROR)
        return engine_error(self);
    if (rc == MBS_WARNING)
        return PyUnicode_FromString(mbs_inst_message(self->inst));
    Py_RETURN_NONE;
}

static PyObject *Instance_do_step(InstanceObject *self, PyObject *args)
{
    double t, h;
    int rc;
    if (!check_idle(self) || !PyArg_ParseTuple(args, "dd", &t, &h))
        return NULL;
    rc = mbs_inst_do_step(self->inst, t, h);
    if (PyErr_Occurred())
        return NULL;
    if (rc != MBS_OK)
        return engine_error(self);
    Py_RETURN_NONE;
}

typedef struct {
    InstanceObject *self;
    PyObject *progress;       /* callable(t) or NULL */
    double every, next;       /* wall-clock seconds between checks, time of the next one */
    PyThreadState *released;  /* the saved thread state while the GIL is released, else NULL */
} run_ctx;

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* after every grid point: now and then, let Python handle signals and report progress */
static int run_tick(void *ctx, double t)
{
    run_ctx *r = (run_ctx *)ctx;
    double now = wall();
    int stop = 0;
    if (now < r->next)
        return 0;
    r->next = now + r->every;
    if (r->released != NULL)
        PyEval_RestoreThread(r->released);
    if (PyErr_CheckSignals() != 0)
        stop = 1;
    else if (r->progress != NULL) {
        PyObject *res = PyObject_CallFunction(r->progress, "d", t);
        if (res == NULL)
            stop = 1;
        Py_XDECREF(res);
    }
    if (r->released != NULL)
        r->released = PyEval_SaveThread();
    return stop;
}

/* Before and after a run: the progress context, the instance marked busy and, where no Python
 * function is called back, the GIL released. */
static void start_run(InstanceObject *self, run_ctx *r, PyObject *progress, double every)
{
    r->self = self;
    r->progress = progress == Py_None ? NULL : progress;
    r->every = every >= 0 ? every : 0.1;
    r->next = wall() + r->every;
    r->released = NULL;
    self->busy = 1;
    if (self->input_fn == NULL && self->tp_fn == NULL)
        r->released = PyEval_SaveThread();
}

static void end_run(InstanceObject *self, run_ctx *r)
{
    if (r->released != NULL)
        PyEval_RestoreThread(r->released);
    self->busy = 0;
}

/* The pending exception (Ctrl-C, or one in a Python function) as a value with its traceback, the
 * error indicator cleared: a run hands it to the caller with what it computed (a new reference). */
static PyObject *pending_exception(void)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL && value != NULL)
        PyException_SetTraceback(value, tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    return value ? value : Py_NewRef(Py_None);
}

/* (rec, reached, status, message or exception, code) of a run that ended with rc */
static PyObject *run_outcome(InstanceObject *self, PyObject *rec, size_t reached, int rc)
{
    if (PyErr_Occurred())
        return Py_BuildValue("(NniNi)", rec, (Py_ssize_t)reached, MBS_ERROR, pending_exception(), MBS_STOPPED);
    return Py_BuildValue("(Nnisi)", rec, (Py_ssize_t)reached, rc,
                         rc == MBS_OK ? "" : mbs_inst_message(self->inst), mbs_inst_last_code(self->inst));
}

/* run(grid, record=0, progress=None, every=0.1)
 *   -> (records[len(grid), width], reached, status, message or exception, code); record: the
 *   MBS_RECORD_* flags of mbs_inst_run */
static PyObject *Instance_run(InstanceObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"grid", "record", "progress", "every", NULL};
    PyObject *ogrid, *progress = Py_None, *rec;
    PyArrayObject *grid;
    int record = 0, rc;
    double every = 0.1;
    npy_intp dims[2];
    size_t reached = 0;
    run_ctx r;
    if (!check_idle(self) ||
        !PyArg_ParseTupleAndKeywords(args, kw, "O|iOd", names, &ogrid, &record, &progress, &every))
        return NULL;
    grid = as_doubles(ogrid);
    if (grid == NULL)
        return NULL;
    dims[0] = PyArray_SIZE(grid);
    dims[1] = (npy_intp)mbs_inst_record_width(record);
    rec = PyArray_ZEROS(2, dims, NPY_DOUBLE, 0);
    if (rec == NULL) {
        Py_DECREF(grid);
        return NULL;
    }
    start_run(self, &r, progress, every);
    rc = mbs_inst_run(self->inst, (const double *)PyArray_DATA(grid), (size_t)dims[0],
                      (double *)PyArray_DATA((PyArrayObject *)rec), (size_t)dims[1], record,
                      run_tick, &r, &reached);
    end_run(self, &r);
    Py_DECREF(grid);
    return run_outcome(self, rec, reached, rc);
}

/* int32 vector of obj (a new reference), or NULL with an exception */
static PyArrayObject *as_ints(PyObject *obj)
{
    return (PyArrayObject *)PyArray_FROMANY(obj, NPY_INT, 1, 1, NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST);
}


/* run_sensitivities(grid, what, index, qsig=(), record=0, progress=None, every=0.1, error_control=0)
 *   -> ((records, reached, status, message or exception, code), sensitivities[len(grid), len(what),
 *   mbs_sens_width()], integrals[len(grid), 1 + len(what), len(qsig)], (nfev, naccept, nreject,
 *   nproj)): mbs_sens_run over the grid for the parameter columns (what[j], index[j]) */
static PyObject *Instance_run_sensitivities(InstanceObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"grid", "what", "index", "qsig", "record", "progress", "every", "error_control", NULL};
    PyObject *ogrid, *owhat, *oindex, *oq = NULL, *progress = Py_None, *rec = NULL, *srec = NULL, *qrec = NULL;
    PyObject *out = NULL;
    PyArrayObject *grid = NULL, *what = NULL, *index = NULL, *qsig = NULL;
    int record = 0, rc, np, nq, error_control = MBS_SENS_ERROR_ALL;
    double every = 0.1;
    long stats[4];
    npy_intp dims[2], sdims[3], qdims[3];
    size_t reached = 0;
    run_ctx r;
    if (!check_idle(self) || !PyArg_ParseTupleAndKeywords(args, kw, "OOO|OiOdi", names, &ogrid, &owhat, &oindex,
                                                          &oq, &record, &progress, &every, &error_control))
        return NULL;
    grid = as_doubles(ogrid);
    what = grid ? as_ints(owhat) : NULL;
    index = what ? as_ints(oindex) : NULL;
    qsig = index ? (oq ? as_ints(oq) : (PyArrayObject *)PyArray_ZEROS(1, (npy_intp[]){0}, NPY_INT, 0)) : NULL;
    if (qsig == NULL)
        goto done;
    if (PyArray_SIZE(what) != PyArray_SIZE(index)) {
        PyErr_SetString(PyExc_ValueError, "what and index must have the same length");
        goto done;
    }
    np = (int)PyArray_SIZE(what);
    nq = (int)PyArray_SIZE(qsig);
    dims[0] = sdims[0] = qdims[0] = PyArray_SIZE(grid);
    dims[1] = (npy_intp)mbs_inst_record_width(record);
    sdims[1] = np;
    sdims[2] = (npy_intp)mbs_sens_width();
    qdims[1] = 1 + np;
    qdims[2] = nq;
    rec = PyArray_ZEROS(2, dims, NPY_DOUBLE, 0);
    srec = rec ? PyArray_ZEROS(3, sdims, NPY_DOUBLE, 0) : NULL;
    qrec = srec ? PyArray_ZEROS(3, qdims, NPY_DOUBLE, 0) : NULL;
    if (qrec == NULL)
        goto done;
    start_run(self, &r, progress, every);
    rc = mbs_sens_run(self->inst, np, (const int *)PyArray_DATA(what), (const int *)PyArray_DATA(index), nq,
                      (const int *)PyArray_DATA(qsig), error_control, (const double *)PyArray_DATA(grid),
                      (size_t)dims[0], (double *)PyArray_DATA((PyArrayObject *)rec), (size_t)dims[1], record,
                      (double *)PyArray_DATA((PyArrayObject *)srec), (double *)PyArray_DATA((PyArrayObject *)qrec),
                      stats, run_tick, &r, &reached);
    end_run(self, &r);
    out = run_outcome(self, rec, reached, rc);
    rec = NULL; /* run_outcome took it */
    if (out != NULL) {
        out = Py_BuildValue("(NNN(llll))", out, srec, qrec, stats[0], stats[1], stats[2], stats[3]);
        srec = qrec = NULL;
    }
done:
    Py_XDECREF(grid);
    Py_XDECREF(what);
    Py_XDECREF(index);
    Py_XDECREF(qsig);
    Py_XDECREF(rec);
    Py_XDECREF(srec);
    Py_XDECREF(qrec);
    return out;
}

/* run_adjoint(what, index, kind, sig, t_end, npts=None, pts=None, progress=None, every=0.1)
 *   -> (values[len(kind)], gradient[len(kind), len(what)], status, message or exception, code,
 *   (forward nfev, naccept, nreject, nproj, backward nfev, naccept, nreject, nproj)) */
static PyObject *Instance_run_adjoint(InstanceObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"what", "index", "kind", "sig", "t_end", "npts", "pts", "progress", "every", NULL};
    PyObject *owhat, *oindex, *okind, *osig, *onpts = NULL, *opts = NULL, *progress = Py_None;
    PyObject *values = NULL, *grad = NULL, *out = NULL;
    PyArrayObject *what = NULL, *index = NULL, *kind = NULL, *sig = NULL, *npts = NULL, *pts = NULL;
    double t_end, every = 0.1;
    long stats[8];
    npy_intp vdims[1], gdims[2];
    int rc, np, nm;
    run_ctx r;
    if (!check_idle(self) || !PyArg_ParseTupleAndKeywords(args, kw, "OOOOd|OOOd", names, &owhat, &oindex, &okind,
                                                          &osig, &t_end, &onpts, &opts, &progress, &every))
        return NULL;
    what = as_ints(owhat);
    index = what ? as_ints(oindex) : NULL;
    kind = index ? as_ints(okind) : NULL;
    sig = kind ? as_ints(osig) : NULL;
    npts = sig ? (onpts && onpts != Py_None ? as_ints(onpts)
                                            : (PyArrayObject *)PyArray_ZEROS(1, PyArray_DIMS(sig), NPY_INT, 0)) : NULL;
    pts = npts ? (opts && opts != Py_None ? as_doubles(opts)
                                          : (PyArrayObject *)PyArray_ZEROS(1, (npy_intp[]){0}, NPY_DOUBLE, 0)) : NULL;
    if (pts == NULL)
        goto done;
    if (PyArray_SIZE(what) != PyArray_SIZE(index) || PyArray_SIZE(kind) != PyArray_SIZE(sig) ||
        PyArray_SIZE(npts) != PyArray_SIZE(sig)) {
        PyErr_SetString(PyExc_ValueError, "what/index and kind/sig/npts must have the same lengths");
        goto done;
    }
    {
        npy_intp k, total = 0;
        for (k = 0; k < PyArray_SIZE(npts); k++)
            total += ((const int *)PyArray_DATA(npts))[k];
        if (PyArray_SIZE(pts) != 3 * total) {
            PyErr_SetString(PyExc_ValueError, "pts must hold (t, data, weight) of every point of npts");
            goto done;
        }
    }
    np = (int)PyArray_SIZE(what);
    nm = (int)PyArray_SIZE(kind);
    vdims[0] = gdims[0] = nm;
    gdims[1] = np;
    values = PyArray_ZEROS(1, vdims, NPY_DOUBLE, 0);
    grad = values ? PyArray_ZEROS(2, gdims, NPY_DOUBLE, 0) : NULL;
    if (grad == NULL)
        goto done;
    start_run(self, &r, progress, every);
    rc = mbs_adj_run(self->inst, np, (const int *)PyArray_DATA(what), (const int *)PyArray_DATA(index), nm,
                     (const int *)PyArray_DATA(kind), (const int *)PyArray_DATA(sig),
                     (const int *)PyArray_DATA(npts), (const double *)PyArray_DATA(pts), t_end,
                     (double *)PyArray_DATA((PyArrayObject *)values), (double *)PyArray_DATA((PyArrayObject *)grad),
                     stats, run_tick, &r);
    end_run(self, &r);
    if (PyErr_Occurred()) {
        out = Py_BuildValue("(NNiNi(llllllll))", values, grad, MBS_ERROR, pending_exception(), MBS_STOPPED,
                            stats[0], stats[1], stats[2], stats[3], stats[4], stats[5], stats[6], stats[7]);
    } else {
        out = Py_BuildValue("(NNisi(llllllll))", values, grad, rc, rc == MBS_OK ? "" : mbs_inst_message(self->inst),
                            mbs_inst_last_code(self->inst), stats[0], stats[1], stats[2], stats[3], stats[4],
                            stats[5], stats[6], stats[7]);
    }
    values = grad = NULL;
done:
    Py_XDECREF(what);
    Py_XDECREF(index);
    Py_XDECREF(kind);
    Py_XDECREF(sig);
    Py_XDECREF(npts);
    Py_XDECREF(pts);
    Py_XDECREF(values);
    Py_XDECREF(grad);
    return out;
}

static PyObject *Instance_multipliers(InstanceObject *self, PyObject *noargs)
{
    double lam[256];
    (void)noargs;
    if (!check_idle(self))
        return NULL;
    if (self->sizes[4] > 256)
        return PyErr_Format(PyExc_ValueError, "more than 256 constraints");
    if (mbs_inst_multipliers(self->inst, lam) != MBS_OK)
        return engine_error(self);
    return new_vector(self->sizes[4], lam);
}

static PyObject *Instance_start_failure(InstanceObject *self, PyObject *noargs)
{
    (void)noargs;
    return PyLong_FromLong(mbs_inst_start_failure(self->inst));
}

static PyObject *Instance_output_derivatives(InstanceObject *self, PyObject *args)
{
    PyObject *odu, *ounk, *out = NULL;
    PyArrayObject *du, *unk = NULL;
    npy_intp n;
    if (!check_idle(self) || !PyArg_ParseTuple(args, "OO", &odu, &ounk))
        return NULL;
    du = as_doubles(odu);
    if (du != NULL)
        unk = as_vrs(ounk);
    if (unk == NULL)
        goto done;
    if (PyArray_SIZE(du) != self->sizes[2]) {
        PyErr_Format(PyExc_ValueError, "du needs %d values (one per input)", self->sizes[2]);
        goto done;
    }
    n = PyArray_SIZE(unk);
    out = PyArray_SimpleNew(1, &n, NPY_DOUBLE);
    if (out != NULL && mbs_inst_output_derivatives(self->inst, (const double *)PyArray_DATA(du), (size_t)n,
                                                   (const unsigned *)PyArray_DATA(unk),
                                                   (double *)PyArray_DATA((PyArrayObject *)out)) != MBS_OK) {
        Py_DECREF(out);
        out = engine_error(self);
    }
done:
    Py_XDECREF(du);
    Py_XDECREF(unk);
    return out;
}

static PyObject *Instance_statistics(InstanceObject *self, PyObject *noargs)
{
    long nfev, nacc, nrej, nproj;
    (void)noargs;
    mbs_inst_statistics(self->inst, &nfev, &nacc, &nrej, &nproj);
    const char *stiff = mbs_inst_stiffness(self->inst);
    long njev, ndec, nnewton;
    mbs_inst_stiff_statistics(self->inst, &njev, &ndec, &nnewton);
    return Py_BuildValue("{sl,sl,sl,sl,si,si,sz,sl,sl,sl}", "nfev", nfev, "naccept", nacc, "nreject", nrej,
                         "nproj", nproj, "switches", mbs_inst_form(self->inst)->part[1],
                         "rank", mbs_inst_form(self->inst)->rank, "stiffness", stiff[0] ? stiff : NULL,
                         "njev", njev, "ndec", ndec, "nnewton", nnewton);
}

/* switches() -> [(t, dependent flags as bytes)] of the partition's choices since the start */
static PyObject *Instance_switches(InstanceObject *self, PyObject *noargs)
{
    unsigned char dep[1024];
    double t;
    int k, n = mbs_inst_switch(self->inst, -1, &t, dep);
    PyObject *out = PyList_New(0);
    (void)noargs;
    if (self->sizes[0] > (int)sizeof dep)
        return out;
    for (k = 0; out != NULL && k < n && k < 32; k++) {
        PyObject *item;
        mbs_inst_switch(self->inst, k, &t, dep);
        item = Py_BuildValue("(dy#)", t, (const char *)dep, (Py_ssize_t)self->sizes[0]);
        if (item == NULL || PyList_Append(out, item) != 0) {
            Py_XDECREF(item);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(item);
    }
    return out;
}

static PyObject *Instance_save(InstanceObject *self, PyObject *noargs)
{
    PyObject *b;
    (void)noargs;
    if (!check_idle(self))
        return NULL;
    b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)mbs_inst_state_size());
    if (b != NULL)
        mbs_inst_save(self->inst, PyBytes_AS_STRING(b));
    return b;
}

static PyObject *Instance_restore(InstanceObject *self, PyObject *args)
{
    Py_buffer buf;
    if (!check_idle(self) || !PyArg_ParseTuple(args, "y*", &buf))
        return NULL;
    if ((size_t)buf.len != mbs_inst_state_size() || mbs_inst_state_check(buf.buf) != 0) {
        PyBuffer_Release(&buf);
        PyErr_SetString(EngineError, "not a saved state of this model's engine (wrong size or invalid fields)");
        return NULL;
    }
    mbs_inst_restore(self->inst, buf.buf);
    PyBuffer_Release(&buf);
    Py_RETURN_NONE;
}

static PyObject *Instance_get_time(InstanceObject *self, void *closure)
{
    (void)closure;
    return PyFloat_FromDouble(mbs_inst_time(self->inst));
}

static PyObject *Instance_get_x(InstanceObject *self, void *closure)
{
    (void)closure;
    return new_vector(2 * self->sizes[0], mbs_inst_state(self->inst));
}

/* ---- the right-hand side x' = F(t, x) from Python (mbs_inst_rhs)
 *
 * Instance.rhs(t, x) evaluates it with the instance's own values; the type RHS binds an instance
 * to an object whose float vectors prm and u (a NumericModel) are read at every call, and is
 * called by vectorcall: no argument tuple, no Python frame.  Both return x' as a new array. */

static PyObject *str_prm, *str_u;

/* obj as a C-contiguous float64 vector of n entries (new reference: obj itself when it already is
 * one, else a converted copy), or NULL with ValueError naming `what`. */
static PyArrayObject *as_vector(PyObject *obj, npy_intp n, const char *what)
{
    PyArrayObject *a;
    if (PyArray_CheckExact(obj)) {
        a = (PyArrayObject *)obj;
        if (PyArray_TYPE(a) == NPY_DOUBLE && PyArray_NDIM(a) == 1 && PyArray_DIM(a, 0) == n &&
            PyArray_IS_C_CONTIGUOUS(a)) {
            Py_INCREF(obj);
            return a;
        }
    }
    a = (PyArrayObject *)PyArray_FROMANY(obj, NPY_DOUBLE, 0, 0, NPY_ARRAY_CARRAY_RO);
    if (a == NULL)
        return NULL;
    if (PyArray_SIZE(a) != n || (n > 0 && PyArray_NDIM(a) != 1)) {
        PyErr_Format(PyExc_ValueError, "%s must be a vector of %zd numbers, got %zd number(s) in %d "
                     "dimension(s)", what, (Py_ssize_t)n, (Py_ssize_t)PyArray_SIZE(a), PyArray_NDIM(a));
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

/* Parse rhs(t, x) of a vectorcall: 0 with *t and a new reference *x, or -1 with the error set. */
static int rhs_arguments(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, int nx, double *t,
                         PyArrayObject **x)
{
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
        PyErr_SetString(PyExc_TypeError, "rhs(t, x) takes no keyword arguments");
        return -1;
    }
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "rhs(t, x) takes exactly two positional arguments (%zd given)", nargs);
        return -1;
    }
    *t = PyFloat_AsDouble(args[0]);
    if (*t == -1.0 && PyErr_Occurred())
        return -1;
    *x = as_vector(args[1], nx, "the state x = [y, y']");
    return *x == NULL ? -1 : 0;
}

/* x' at (t, x) as a new array, with prm and u (NULL: the instance's values).  A failed pivot of a
 * coordinate calls on_error(t, pivot, x) (if given; it is expected to raise), any other failure
 * raises EngineError with the engine's message. */
static PyObject *evaluate_rhs(InstanceObject *self, double t, PyArrayObject *x, const double *prm,
                              const double *u, PyObject *on_error)
{
    npy_intp nx = 2 * (npy_intp)self->sizes[0];
    PyObject *out;
    int pivot, rc;
    if (!check_idle(self))
        return NULL;
    out = PyArray_SimpleNew(1, &nx, NPY_DOUBLE);
    if (out == NULL)
        return NULL;
    rc = mbs_inst_rhs(self->inst, t, (const double *)PyArray_DATA(x), prm, u,
                      (double *)PyArray_DATA((PyArrayObject *)out), &pivot);
    if (rc == MBS_OK)
        return out;
    Py_DECREF(out);
    if (PyErr_Occurred())
        return NULL; /* a Python time-parameter or input function raised */
    if (pivot > 0 && on_error != NULL) {
        PyObject *res = PyObject_CallFunction(on_error, "diO", t, pivot, (PyObject *)x);
        Py_XDECREF(res);
        if (PyErr_Occurred())
            return NULL;
    }
    return engine_error(self);
}

/* Instance.rhs(t, x) -> x' with the instance's values */
static PyObject *Instance_rhs(InstanceObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyArrayObject *x;
    PyObject *out;
    double t;
    if (rhs_arguments(args, nargs, kwnames, 2 * self->sizes[0], &t, &x) != 0)
        return NULL;
    out = evaluate_rhs(self, t, x, NULL, NULL, NULL);
    Py_DECREF(x);
    return out;
}

static PyMethodDef Instance_methods[] = {
    {"set", (PyCFunction)Instance_set, METH_VARARGS, "set(vrs, values): check and set values"},
    {"get", (PyCFunction)Instance_get, METH_VARARGS, "get(vrs) -> values"},
    {"configure", (PyCFunction)(void (*)(void))Instance_configure, METH_VARARGS | METH_KEYWORDS,
     "configure(formulation, alpha=, beta=, rank_tol=, newton_tol=, newton_max=, aba=True)"},
    {"set_functions", (PyCFunction)Instance_set_functions, METH_VARARGS,
     "set_functions(inputs, time_parameters): callables of t, or None"},
    {"set_time", (PyCFunction)Instance_set_time, METH_VARARGS, "set_time(t0, t_stop=inf)"},
    {"start", (PyCFunction)Instance_start, METH_VARARGS, "start(hold=None) -> None or warning text"},
    {"do_step", (PyCFunction)Instance_do_step, METH_VARARGS, "do_step(t, h)"},
    {"run", (PyCFunction)(void (*)(void))Instance_run, METH_VARARGS | METH_KEYWORDS,
     "run(grid, record=0, progress=None, every=0.1) -> (records, reached, status, message, code)"},
    {"run_sensitivities", (PyCFunction)(void (*)(void))Instance_run_sensitivities, METH_VARARGS | METH_KEYWORDS,
     "run_sensitivities(grid, what, index, qsig=(), record=0, progress=None, every=0.1, error_control=0)"},
    {"run_adjoint", (PyCFunction)(void (*)(void))Instance_run_adjoint, METH_VARARGS | METH_KEYWORDS,
     "run_adjoint(what, index, kind, sig, t_end, npts=None, pts=None, progress=None, every=0.1)"},
    {"start_failure", (PyCFunction)Instance_start_failure, METH_NOARGS,
     "why the last start failed (MBS_START_*), 0 if it did not"},
    {"multipliers", (PyCFunction)Instance_multipliers, METH_NOARGS, "Lagrange multipliers now"},
    {"output_derivatives", (PyCFunction)Instance_output_derivatives, METH_VARARGS,
     "output_derivatives(du, vrs) -> d(values)/du . du"},
    {"statistics", (PyCFunction)Instance_statistics, METH_NOARGS, "integrator counters"},
    {"switches", (PyCFunction)Instance_switches, METH_NOARGS, "partition choices: [(t, dependent)]"},
    {"save", (PyCFunction)Instance_save, METH_NOARGS, "save() -> bytes"},
    {"restore", (PyCFunction)Instance_restore, METH_VARARGS, "restore(bytes)"},
    {"rhs", (PyCFunction)(void (*)(void))Instance_rhs, METH_FASTCALL | METH_KEYWORDS,
     "rhs(t, x) -> x' of the formulation with the instance's values (no step is taken)"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Instance_getset[] = {
    {"time", (getter)Instance_get_time, NULL, "current time", NULL},
    {"x", (getter)Instance_get_x, NULL, "current state [y, y']", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject InstanceType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "@MODULE@.Instance",
    .tp_basicsize = sizeof(InstanceObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "one running instance of the model on the mbsfmu C engine",
    .tp_new = Instance_new,
    .tp_dealloc = (destructor)Instance_dealloc,
    .tp_methods = Instance_methods,
    .tp_getset = Instance_getset,
};

/* ---- RHS(instance, numeric, on_error=None): rhs(t, x) with numeric.prm and numeric.u */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *dict;          /* attributes set from Python (mbsfmu.engine.compiled_rhs sets several) */
    InstanceObject *owner;
    PyObject *numeric;       /* read at every call: prm (nprm floats), u (nu floats) */
    PyObject *numeric_dict;  /* numeric's instance dict where prm and u are plain attributes */
    PyObject *on_error;      /* callable(t, pivot, x), or NULL */
} RHSObject;

/* numeric.<name> as a float64 vector of n entries (new reference).  A plain instance attribute
 * is taken from the instance dict (one dict lookup instead of the attribute protocol). */
static PyArrayObject *numeric_vector(RHSObject *r, PyObject *name, npy_intp n, const char *what)
{
    PyArrayObject *a;
    PyObject *obj = r->numeric_dict != NULL ? PyDict_GetItemWithError(r->numeric_dict, name) : NULL;
    if (obj != NULL)
        return as_vector(obj, n, what);
    if (PyErr_Occurred())
        return NULL;
    obj = PyObject_GetAttr(r->numeric, name);
    if (obj == NULL)
        return NULL;
    a = as_vector(obj, n, what);
    Py_DECREF(obj);
    return a;
}

static PyObject *RHS_call(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    RHSObject *r = (RHSObject *)op;
    InstanceObject *self = r->owner;
    PyArrayObject *x, *prm = NULL, *u = NULL;
    PyObject *out = NULL;
    double t;
    if (rhs_arguments(args, PyVectorcall_NARGS(nargsf), kwnames, 2 * self->sizes[0], &t, &x) != 0)
        return NULL;
    prm = numeric_vector(r, str_prm, self->sizes[1], "the parameter values (numeric.prm)");
    if (prm != NULL)
        u = numeric_vector(r, str_u, self->sizes[2], "the input values (numeric.u)");
    if (u != NULL)
        out = evaluate_rhs(self, t, x, (const double *)PyArray_DATA(prm), (const double *)PyArray_DATA(u),
                           r->on_error);
    Py_DECREF(x);
    Py_XDECREF(prm);
    Py_XDECREF(u);
    return out;
}

static PyObject *RHS_tp_call(PyObject *op, PyObject *args, PyObject *kw)
{
    if (kw != NULL && PyDict_GET_SIZE(kw) > 0) {
        PyErr_SetString(PyExc_TypeError, "rhs(t, x) takes no keyword arguments");
        return NULL;
    }
    return RHS_call(op, &PyTuple_GET_ITEM(args, 0), (size_t)PyTuple_GET_SIZE(args), NULL);
}

static int RHS_init(PyObject *op, PyObject *args, PyObject *kw)
{
    static char *names[] = {"instance", "numeric", "on_error", NULL};
    RHSObject *r = (RHSObject *)op;
    PyObject *owner, *numeric, *on_error = Py_None;
    PyTypeObject *ntype;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!O|O", names, &InstanceType, &owner, &numeric, &on_error))
        return -1;
    if (on_error != Py_None && !PyCallable_Check(on_error)) {
        PyErr_SetString(PyExc_TypeError, "on_error must be callable or None");
        return -1;
    }
    Py_XSETREF(r->owner, (InstanceObject *)Py_NewRef(owner));
    Py_XSETREF(r->numeric, Py_NewRef(numeric));
    Py_XSETREF(r->on_error, on_error == Py_None ? NULL : Py_NewRef(on_error));
    Py_CLEAR(r->numeric_dict);
    /* the dict shortcut only where the type defines neither name (a property would win over it) */
    ntype = Py_TYPE(numeric);
    if (_PyType_Lookup(ntype, str_prm) == NULL && _PyType_Lookup(ntype, str_u) == NULL) {
        PyObject **dictptr = _PyObject_GetDictPtr(numeric);
        if (dictptr != NULL && *dictptr != NULL && PyDict_CheckExact(*dictptr))
            r->numeric_dict = Py_NewRef(*dictptr);
    }
    r->vectorcall = RHS_call;
    return 0;
}

static int RHS_traverse(PyObject *op, visitproc visit, void *arg)
{
    RHSObject *r = (RHSObject *)op;
    Py_VISIT(r->dict);
    Py_VISIT(r->owner);
    Py_VISIT(r->numeric);
    Py_VISIT(r->numeric_dict);
    Py_VISIT(r->on_error);
    return 0;
}

static int RHS_clear(PyObject *op)
{
    RHSObject *r = (RHSObject *)op;
    Py_CLEAR(r->dict);
    Py_CLEAR(r->owner);
    Py_CLEAR(r->numeric);
    Py_CLEAR(r->numeric_dict);
    Py_CLEAR(r->on_error);
    return 0;
}

static void RHS_dealloc(PyObject *op)
{
    PyObject_GC_UnTrack(op);
    RHS_clear(op);
    Py_TYPE(op)->tp_free(op);
}

static PyTypeObject RHSType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "@MODULE@.RHS",
    .tp_doc = "RHS(instance, numeric, on_error=None): rhs(t, x) -> x' of the instance's formulation with "
              "numeric.prm and numeric.u read at every call; on_error(t, pivot, x) is called when the "
              "pivot of coordinate pivot - 1 failed",
    .tp_basicsize = sizeof(RHSObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = PyType_GenericNew,
    .tp_init = RHS_init,
    .tp_dealloc = RHS_dealloc,
    .tp_traverse = RHS_traverse,
    .tp_clear = RHS_clear,
    .tp_call = RHS_tp_call,
    .tp_vectorcall_offset = offsetof(RHSObject, vectorcall),
    .tp_dictoffset = offsetof(RHSObject, dict),
};

/* ---- module functions: the model's layout */

static PyObject *mod_sizes(PyObject *m, PyObject *noargs)
{
    static const char *keys[] = {"f", "nprm", "nu", "ntp", "m", "nic", "nout", "nvars", "has_aba",
                                 "vr_out", "vr_prm", "vr_rtol", "vr_u", "vr_method"};
    int s[16], n = mbs_model_sizes(s), i;
    PyObject *d = PyDict_New();
    (void)m;
    (void)noargs;
    for (i = 0; d != NULL && i < n; i++) {
        PyObject *v = PyLong_FromLong(s[i]);
        if (v == NULL || PyDict_SetItemString(d, keys[i], v) != 0) {
            Py_XDECREF(v);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(v);
    }
    return d;
}

static PyObject *mod_variables(PyObject *m, PyObject *noargs)
{
    int n = mbs_model_nvars(), i;
    PyObject *list = PyList_New(n);
    (void)m;
    (void)noargs;
    for (i = 0; list != NULL && i < n; i++) {
        PyObject *item = Py_BuildValue("(si)", mbs_var_name((unsigned)i), mbs_var_kind((unsigned)i));
        if (item == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, item);
    }
    return list;
}

static PyObject *mod_guid(PyObject *m, PyObject *noargs)
{
    (void)m;
    (void)noargs;
    return PyUnicode_FromString(mbs_model_guid());
}

static PyMethodDef module_methods[] = {
    {"sizes", mod_sizes, METH_NOARGS, "the model's sizes and value-reference offsets"},
    {"variables", mod_variables, METH_NOARGS, "[(name, kind)] in value-reference order"},
    {"guid", mod_guid, METH_NOARGS, "the GUID of this build"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "@MODULE@",
                                        "mbsfmu C engine of one model", -1, module_methods,
                                        NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_@MODULE@(void)
{
    PyObject *m;
    import_array();
    if (PyType_Ready(&InstanceType) < 0 || PyType_Ready(&RHSType) < 0)
        return NULL;
    str_prm = PyUnicode_InternFromString("prm");
    str_u = PyUnicode_InternFromString("u");
    if (str_prm == NULL || str_u == NULL)
        return NULL;
    m = PyModule_Create(&module_def);
    if (m == NULL)
        return NULL;
    EngineError = PyErr_NewException("@MODULE@.EngineError", PyExc_RuntimeError, NULL);
    if (EngineError == NULL || PyModule_AddObject(m, "EngineError", EngineError) < 0 ||
        PyModule_AddObject(m, "Instance", (PyObject *)&InstanceType) < 0 ||
        PyModule_AddObject(m, "RHS", (PyObject *)&RHSType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(EngineError);
    Py_INCREF(&InstanceType);
    Py_INCREF(&RHSType);
    return m;
}
