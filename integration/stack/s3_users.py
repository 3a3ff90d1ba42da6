"""Makes the local S3 server (moto) check credentials like S3: creates the warehouse bucket, an IAM
user allowed every S3 action, and its access key, then turns moto's authentication on (it is off
by default: moto answers any signature). Prints the key as JSON for the stack's endpoints.json.

Usage: s3_users.py ENDPOINT BUCKET
"""

import json
import sys
import urllib.request

import boto3


def main():
    endpoint, bucket = sys.argv[1], sys.argv[2]
    # Before authentication is on, moto takes any credentials: these only sign the setup calls.
    setup = {"endpoint_url": endpoint, "region_name": "us-east-1", "aws_access_key_id": "setup", "aws_secret_access_key": "setup"}
    s3 = boto3.client("s3", **setup)
    existing = [b["Name"] for b in s3.list_buckets().get("Buckets", [])]
    if bucket not in existing:
        s3.create_bucket(Bucket=bucket)
    iam = boto3.client("iam", **setup)
    iam.create_user(UserName="floe")
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["s3:*"], "Resource": "*"}]}
    iam.put_user_policy(UserName="floe", PolicyName="s3-all", PolicyDocument=json.dumps(policy))
    key = iam.create_access_key(UserName="floe")["AccessKey"]
    # From now on every request must be signed by a known key with the permission for its action.
    request = urllib.request.Request(f"{endpoint}/moto-api/reset-auth", data=b"0", method="POST", headers={"Content-Type": "text/plain"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        answer.read()
    print(json.dumps({"accessKeyId": key["AccessKeyId"], "secretAccessKey": key["SecretAccessKey"]}))


if __name__ == "__main__":
    main()
