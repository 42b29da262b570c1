"""Script text for the Ray tests' clients: what a client holding a token (or none) gets from a Ray cluster."""

GCS_PROBE = '''
import grpc
from ray.core.generated import gcs_service_pb2, gcs_service_pb2_grpc


def gcs(address, token):
    """"OK", or the code of the refusal, for one call to the cluster's GCS with ``token`` (None: none)."""
    stub = gcs_service_pb2_grpc.NodeInfoGcsServiceStub(grpc.insecure_channel(address))
    try:
        stub.GetClusterId(gcs_service_pb2.GetClusterIdRequest(), timeout=20,
                          metadata=[("authorization", "Bearer " + token)] if token else [])
        return "OK"
    except grpc.RpcError as err:
        return err.code().name
'''
